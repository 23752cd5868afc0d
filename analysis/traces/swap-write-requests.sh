# For `study run --workload thrash --job-extra analysis/traces/swap-write-requests.sh`:
# counts the block layer's write requests by who queued them (kswapd0, or any other task:
# the program in direct reclaim) and by size (one page, or more: merged), and the write
# commands the disk was given, by size, with their pages. Traces block_rq_insert and
# block_rq_issue (writes only) in the top-level buffer and counts at the job's end, after
# it; printed as "TRACE-COUNT: class n". A request can grow after it is queued (a later
# bio merged into it), so only the issued commands' pages add up to all that was written.
# The same counts per 10 ms of CLOCK_MONOTONIC (the trace's mono clock, the clock of the
# workload's phase marks) as "TRACE-AT: start n..." in TRACE-COLUMNS' order, so that
# analysis/trace_counts.py can split them by phase.
# Question it answers: do the classic LRU's slow fills write one page a command because
# kswapd and direct reclaim interleave their swap writes (thrash's findings, untraced)?
# Memory: the top-level buffer only, runjob's 2 MiB a CPU that every run has, traced or
# not (~30,000 events; its events exist from boot).
# This trace first used one tracefs instance per class: on 6.1 each instance costs ~2.4
# MiB of slab (its copy of the events tree), and nine took ~21 MiB, a quarter of a 96 MiB
# guest's free memory.
T=/sys/kernel/tracing
mount -t tracefs tracefs $T 2>/dev/null
echo mono > $T/trace_clock
# rq_insert's task is the one whose plug was flushed (the submitter); its nr_sector is
# the request after the plug's merges. rq_issue's task is whoever dispatched: size only.
for event in block_rq_insert block_rq_issue; do
  echo 'rwbs ~ "W*"' > $T/events/block/$event/filter || echo "TRACE: bad filter $event"
  echo 1 > $T/events/block/$event/enable
done
echo 1 > $T/tracing_on
echo "TRACE: counting block_rq_insert and block_rq_issue writes"
# runjob ends with `guestctl done`: count first, saying how many events the buffer lost
# (none, or the counts are short).
guestctl() {
  if [ "$1" = done ]; then
    echo 0 > $T/tracing_on
    echo "TRACE: overrun $(sed -n 's/^overrun: //p' $T/per_cpu/cpu0/stats)"
    # 6.1: "... block_rq_insert: 8,0 W 4096 () 123456 + 8 [kswapd0]"
    grep -v '^#' $T/trace | awk '
      BEGIN { ncs = split("insert-kswapd-1page insert-kswapd-more insert-other-1page insert-other-more issue-1page issue-more issue-sectors-over-64 issue-pages", cs, " ") }
      { for (i = 1; i <= NF; i++) {
          if ($i == "+") sectors = $(i + 1)
          # the 10-ms slice from the time stamp digits ("12.345678:"), not float arithmetic
          if ($i ~ /^block_rq_(insert|issue):$/) { split($(i - 1), ts, "."); at = ts[1] * 100 + substr(ts[2], 1, 2) }
        }
        size = (sectors == 8) ? "1page" : "more"
        if ($0 ~ /block_rq_insert:/) {
          c = "insert-" (($NF == "[kswapd0]") ? "kswapd" : "other") "-" size; n[c]++; b[at, c]++
        } else if ($0 ~ /block_rq_issue:/) {
          c = "issue-" size; n[c]++; b[at, c]++
          n["issue-pages"] += sectors / 8; b[at, "issue-pages"] += sectors / 8
          if (sectors > 64) { n["issue-sectors-over-64"]++; b[at, "issue-sectors-over-64"]++ }
        }
        seen[at] = 1; if (!any || at < first) first = at; if (!any || at > last) last = at; any = 1 }
      END { for (j = 1; j <= ncs; j++) printf "TRACE-COUNT: %s %d\n", cs[j], n[cs[j]]
            line = "TRACE-COLUMNS:"; for (j = 1; j <= ncs; j++) line = line " " cs[j]; print line
            if (!any) exit
            for (at = first; at <= last; at++) if (at in seen) {
              line = sprintf("TRACE-AT: %.2f", at / 100)
              for (j = 1; j <= ncs; j++) line = line " " (b[at, cs[j]] + 0)
              print line } }'
  fi
  command guestctl "$@"
}
