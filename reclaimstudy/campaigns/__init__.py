"""Campaigns: runs, studies and sweeps (locally or on Slurm), their time estimates, and a
study's life in the repository: publishing, restoring on a new machine, carrying
unfinished gem5 runs between machines, and making published runs again."""
