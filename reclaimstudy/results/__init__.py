"""What a study's results folder holds, read: a run's identity and run.json, the guest
console's protocol lines, gem5's stats.txt, and the sweep log. Read-only: nothing here
writes a file, so analysis/ may read runs through it (tests/test_layout.py)."""
