# For `study run --workload thrash --job-extra analysis/traces/swap-write-requests.sh`:
# counts the block layer's write requests by who queued them (kswapd0, or any other task:
# the program in direct reclaim) and by size (one page, or more: merged), and the pages
# in each writer's requests. Traces block_rq_insert (writes only) in the top-level
# buffer and counts at the job's end, after it; printed as "TRACE-COUNT: class n".
# Question it answers: do the classic LRU's slow fills write one page a command because
# kswapd and direct reclaim interleave their swap writes (thrash's findings, untraced)?
# Memory: the top-level buffer only, 1 MiB (~14,000 requests; its events exist from
# boot). This trace first used one tracefs instance per class: on 6.1 each instance
# costs ~2.4 MiB of slab (its copy of the events tree), and nine took ~21 MiB, a quarter
# of a 96 MiB guest's free memory.
T=/sys/kernel/tracing
mount -t tracefs tracefs $T 2>/dev/null
echo 1024 > $T/buffer_size_kb
# rq_insert's task is the one whose plug was flushed (the submitter); its nr_sector is
# the request after the plug's merges.
echo 'rwbs ~ "W*"' > $T/events/block/block_rq_insert/filter || echo "TRACE: bad filter"
echo 1 > $T/events/block/block_rq_insert/enable
echo 1 > $T/tracing_on
echo "TRACE: counting block_rq_insert writes"
# runjob ends with `guestctl done`: count first, saying how many events the buffer lost
# (none, or the counts are short).
guestctl() {
  if [ "$1" = done ]; then
    echo 0 > $T/tracing_on
    echo "TRACE: overrun $(sed -n 's/^overrun: //p' $T/per_cpu/cpu0/stats)"
    # 6.1: "... block_rq_insert: 8,0 W 4096 () 123456 + 8 [kswapd0]"
    grep -v '^#' $T/trace | awk '
      { for (i = 1; i <= NF; i++) if ($i == "+") sectors = $(i + 1)
        who = ($NF == "[kswapd0]") ? "kswapd" : "other"
        size = (sectors == 8) ? "1page" : "more"
        n["insert-" who "-" size]++; pages["pages-" who] += sectors / 8 }
      END { split("insert-kswapd-1page insert-kswapd-more insert-other-1page insert-other-more", cs, " ")
            for (j = 1; j <= 4; j++) printf "TRACE-COUNT: %s %d\n", cs[j], n[cs[j]]
            printf "TRACE-COUNT: pages-kswapd %d\nTRACE-COUNT: pages-other %d\n",
                   pages["pages-kswapd"], pages["pages-other"] }'
  fi
  command guestctl "$@"
}
