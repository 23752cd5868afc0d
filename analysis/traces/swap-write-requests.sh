# For `study run --workload thrash --job-extra analysis/traces/swap-write-requests.sh`:
# counts the block layer's write requests by who queued them (kswapd0, or any other task:
# the program in direct reclaim) and by size (one page, or more: merged), and the pages
# those tasks submitted, without dumping a trace: one tracefs instance per class, each
# with a filtered event, counts its events (the entries and overruns in its stats, so a
# small buffer loses no count). Printed at the job's end as "TRACE-COUNT: class n".
# Question it answers: do the classic LRU's slow fills write one page a command because
# kswapd and direct reclaim interleave their swap writes (thrash's findings, untraced)?
T=/sys/kernel/tracing
mount -t tracefs tracefs $T 2>/dev/null
# rq_insert's task is the one whose plug was flushed (the submitter); its nr_sector is
# the request after the plug's merges. rq_issue's task is whoever dispatched: size only.
# bio_queue: every page a task submits (a swap write is one bio a page).
set -- \
  "insert-kswapd-1page block_rq_insert" 'rwbs ~ "W*" && comm == "kswapd0" && nr_sector == 8' \
  "insert-kswapd-more block_rq_insert" 'rwbs ~ "W*" && comm == "kswapd0" && nr_sector > 8' \
  "insert-other-1page block_rq_insert" 'rwbs ~ "W*" && comm != "kswapd0" && nr_sector == 8' \
  "insert-other-more block_rq_insert" 'rwbs ~ "W*" && comm != "kswapd0" && nr_sector > 8' \
  "issue-1page block_rq_issue" 'rwbs ~ "W*" && nr_sector == 8' \
  "issue-more block_rq_issue" 'rwbs ~ "W*" && nr_sector > 8' \
  "issue-sectors-over-64 block_rq_issue" 'rwbs ~ "W*" && nr_sector > 64' \
  "bio-kswapd block_bio_queue" 'rwbs ~ "W*" && comm == "kswapd0"' \
  "bio-other block_bio_queue" 'rwbs ~ "W*" && comm != "kswapd0"'
TRACE_CLASSES=
while [ $# -ge 2 ]; do
  name=${1% *}; event=${1#* }; filter=$2; shift 2
  mkdir -p $T/instances/$name
  # 8 KiB a CPU: the counts live in the stats, not the buffer (64-96 MiB systems)
  echo 8 > $T/instances/$name/buffer_size_kb
  echo "$filter" > $T/instances/$name/events/block/$event/filter || echo "TRACE: bad filter $name"
  echo 1 > $T/instances/$name/events/block/$event/enable
  TRACE_CLASSES="$TRACE_CLASSES $name"
done
echo "TRACE: counting$TRACE_CLASSES"
# runjob ends with `guestctl done`: print the counts first.
guestctl() {
  if [ "$1" = done ]; then
    for name in $TRACE_CLASSES; do
      stats=$T/instances/$name/per_cpu/cpu0/stats
      entries=$(sed -n 's/^entries: //p' $stats); overrun=$(sed -n 's/^overrun: //p' $stats)
      echo "TRACE-COUNT: $name $((entries + overrun))"
    done
  fi
  command guestctl "$@"
}
