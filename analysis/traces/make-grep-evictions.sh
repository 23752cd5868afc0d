# For `study run --workload make-grep --job-extra analysis/traces/make-grep-evictions.sh`:
# traces the page cache's pages added (read from disk) and deleted (evicted, or the
# make's objects overwritten) for the make's files: its units, its headers and the
# compiler, and at the job's end counts per group the pages added, the distinct pages
# among them (so the adds beyond those are re-reads of pages evicted during the job) and
# the pages deleted. Printed as "TRACE-COUNT: group what n".
# Question it answers: which of the make's files does MGLRU (or the classic LRU without
# use-once) read back that the classic LRU with use-once keeps?
# Memory: the top-level buffer only, runjob's 2 MiB a CPU that every run has, traced or
# not (its events exist from boot). On 6.1 each
# tracefs instance costs ~2.4 MiB of slab for its copy of the events tree: nine took a
# quarter of a 96 MiB guest's free memory (the swap-write trace before it was rewritten).
T=/sys/kernel/tracing
mount -t tracefs tracefs $T 2>/dev/null
D=/usr/share/reclaim/data/make-grep
# A group is an inode range (make-data writes each folder's files in one go), checked to
# hold no other regular file of the data folder.
range() {
  find "$1" -type f -printf '%i\n' | sort -n | sed -n '1p;$p' | tr '\n' ' '
}
set -- $(range $D/src/units); units_lo=$1; units_hi=$2
set -- $(range $D/src/include); headers_lo=$1; headers_hi=$2
cc1=$(stat -c %i $D/cc1)
echo "TRACE: units $units_lo-$units_hi headers $headers_lo-$headers_hi cc1 $cc1"
find $D -type f -printf '%i %p\n' | awk -v a=$units_lo -v b=$units_hi -v c=$headers_lo \
  -v d=$headers_hi '($1>=a && $1<=b && index($2,"/src/units/")==0) ||
                    ($1>=c && $1<=d && index($2,"/src/include/")==0) {print "TRACE: range holds another file: " $0}'
filter="(i_ino >= $units_lo && i_ino <= $units_hi) || (i_ino >= $headers_lo && i_ino <= $headers_hi) || i_ino == $cc1"
for event in add_to_page_cache delete_from_page_cache; do
  echo "$filter" > $T/events/filemap/mm_filemap_$event/filter || echo "TRACE: bad filter $event"
  echo 1 > $T/events/filemap/mm_filemap_$event/enable
done
echo 1 > $T/tracing_on
# runjob ends with `guestctl done`: count first (after the job, so its time is not the
# job's), saying how many events the buffer lost (none, or the counts are short).
guestctl() {
  if [ "$1" = done ]; then
    echo 0 > $T/tracing_on
    echo "TRACE: overrun $(sed -n 's/^overrun: //p' $T/per_cpu/cpu0/stats)"
    grep -v '^#' $T/trace | awk -v a=$units_lo -v b=$units_hi -v c=$headers_lo \
      -v d=$headers_hi -v e=$cc1 '
      { ino = ""; idx = ""
        for (i = 1; i <= NF; i++) {
          if ($i == "ino") { ino = $(i + 1) }
          if ($i ~ /^ofs=/) { idx = substr($i, 5) }
        }
        # 6.1 prints "ino <hex>" and the byte offset of the page, "ofs=<decimal>"
        n = 0; s = tolower(ino)
        for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        g = (n >= a && n <= b) ? "units" : (n >= c && n <= d) ? "headers" : (n == e) ? "cc1" : "other"
        if ($0 ~ /mm_filemap_add_to_page_cache/) {
          add[g]++; key = n ":" idx; if (!(key in seen)) { seen[key] = 1; distinct[g]++ }
        } else if ($0 ~ /mm_filemap_delete_from_page_cache/) { del[g]++ }
      }
      END { split("units headers cc1 other", gs, " ")
            for (j = 1; j <= 4; j++) { g = gs[j]
              printf "TRACE-COUNT: %s added %d\nTRACE-COUNT: %s distinct %d\nTRACE-COUNT: %s deleted %d\n",
                     g, add[g], g, distinct[g], g, del[g] } }'
  fi
  command guestctl "$@"
}
