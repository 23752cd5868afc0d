"""The host machine as every part of the tool uses it, knowing nothing of studies: its
tools and their Debian packages, supervised processes, file locks, a folder swapped in one
step, and progress on the terminal."""
