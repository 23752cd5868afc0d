"""gem5 full-system study of Linux page-reclaim policies: the command-line tool."""
