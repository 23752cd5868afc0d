"""Analysis of the study's runs: gem5 stats, guest records, comparisons, reports."""
