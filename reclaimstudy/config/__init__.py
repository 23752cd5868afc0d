"""What a study is made of, read from configs/ and workloads/: system profiles, reclaim
policies, workloads and the metrics they declare, the rules verdicts are judged by, and
what a disk profile predicts. Read-only: nothing here writes a file."""
