# For `study run --workload desktop-launch --job-extra analysis/traces/desktop-launch-file-io.sh`:
# counts, per kind of file of the desktop's applications, the pages the page cache added
# (read from disk: first reads and refaults) and deleted (evicted), so a run can say how
# much of its file I/O was executable text (app-NN, libtoolkit.so) and how much the
# applications' data files (app-NN.dat, mapped read-only, not executable), beside its
# swap-ins (vmstat pswpin), and the reads they came in ("batches": runs of consecutive
# pages of one file, about one major fault each). Printed at the job's end as "TRACE-COUNT: kind what pages".
# It also sums the mm_vmscan_lru_shrink_active events per list (file, anon): calls, pages
# taken, kept active (seed 000's rule: referenced executable file pages), deactivated
# and found referenced, as "TRACE-ACTIVE: list what n": how often reclaim scanned the
# active file list, against which seed 000's protection lasts one trip.
# The events stream through trace_pipe into a small awk in the guest, so a long run
# cannot overrun runjob's 2 MiB buffer (the overrun is printed: it should be 0); that
# awk and its cat are the trace's only memory beyond the buffer every run has.
T=/sys/kernel/tracing
mount -t tracefs tracefs $T 2>/dev/null
D=/usr/share/reclaim/data/$WORKLOAD  # desktop-launch, or a variant of it
find $D -type f -printf '%i %f\n' > /tmp/trace-inodes
set -- $(awk '{print $1}' /tmp/trace-inodes | sort -n | sed -n '1p;$p')
lo=$1; hi=$2
echo "TRACE: desktop-launch inodes $lo-$hi, $(wc -l < /tmp/trace-inodes) files"
filter="i_ino >= $lo && i_ino <= $hi"
for event in add_to_page_cache delete_from_page_cache; do
  echo "$filter" > $T/events/filemap/mm_filemap_$event/filter || echo "TRACE: bad filter $event"
  echo 1 > $T/events/filemap/mm_filemap_$event/enable
done
( cat $T/trace_pipe & echo $! > /tmp/trace-cat.pid; wait ) | awk '
  NR == FNR { kind[$1] = ($2 ~ /\.dat$/) ? "data" : ($2 == "libtoolkit.so") ? "toolkit" : "code"; next }
  { ino = ""
    for (i = 1; i <= NF; i++) if ($i == "ino") ino = $(i + 1)
    n = 0; s = tolower(ino)
    for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    k = (n in kind) ? kind[n] : "other"
    if ($0 ~ /mm_vmscan_lru_shrink_active/) {
      l = ($0 ~ /RECLAIM_WB_FILE/) ? "file" : "anon"; calls[l]++
      for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        if (kv[1] == "nr_taken") taken[l] += kv[2]
        if (kv[1] == "nr_active") kept[l] += kv[2]
        if (kv[1] == "nr_deactivated") deact[l] += kv[2]
        if (kv[1] == "nr_referenced") refd[l] += kv[2]
      }
    } else if ($0 ~ /mm_filemap_add_to_page_cache/) {
      add[k]++
      # a batch: pages of one file added in rising order within 32 pages (the 6.1
      # read-around window, 128 KiB) of the first page of the batch: one read-around or
      # readahead, so about one major fault each (an upper bound: a window whose
      # pages are partly cached still reads in one batch; ofs= is the byte offset)
      o = ""; for (i = 1; i <= NF; i++) if ($i ~ /^ofs=/) o = substr($i, 5) + 0
      if (!(n == last_ino && o > last_ofs && o < batch_start + 32 * 4096)) { batch[k]++; batch_start = o }
      last_ino = n; last_ofs = o
    }
    else if ($0 ~ /mm_filemap_delete_from_page_cache/) del[k]++ }
  END { split("code toolkit data other", ks, " ")
        for (j = 1; j <= 4; j++) printf "TRACE-COUNT: %s added %d\nTRACE-COUNT: %s deleted %d\nTRACE-COUNT: %s batches %d\n", ks[j], add[ks[j]], ks[j], del[ks[j]], ks[j], batch[ks[j]]
        split("file anon", ls, " ")
        for (j = 1; j <= 2; j++) printf "TRACE-ACTIVE: %s calls %d\nTRACE-ACTIVE: %s taken %d\nTRACE-ACTIVE: %s kept %d\nTRACE-ACTIVE: %s deactivated %d\nTRACE-ACTIVE: %s referenced %d\n", ls[j], calls[ls[j]], ls[j], taken[ls[j]], ls[j], kept[ls[j]], ls[j], deact[ls[j]], ls[j], refd[ls[j]] }
' /tmp/trace-inodes - > /tmp/trace-counts &
trace_awk=$!
echo 1 > $T/events/vmscan/mm_vmscan_lru_shrink_active/enable
echo 1 > $T/tracing_on
guestctl() {
  if [ "$1" = done ]; then
    echo 0 > $T/tracing_on
    sleep 1
    kill "$(cat /tmp/trace-cat.pid)" 2>/dev/null
    wait $trace_awk 2>/dev/null
    echo "TRACE: overrun $(sed -n 's/^overrun: //p' $T/per_cpu/cpu0/stats)"
    cat /tmp/trace-counts
  fi
  command guestctl "$@"
}
