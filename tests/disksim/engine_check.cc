// gem5-patches/0005's DiskSim engine (src/dev/storage/disksim_engine.{hh,cc}, taken from
// the patch by tests/test_disksim_gem5.py) outside gem5: a drive that serves requests,
// and drives restored from its log at checkpoints between requests and inside one,
// must answer every later request at the same time and with the same DiskSim totals.
//
//   engine_check PARAMETERS VALID_DIR REQUESTS
//
// Prints "restores R, answers A, differing D, totals differing T" and, for a log
// replayed under another time offset (another seed's), "shifted: ok".
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "dev/storage/disksim_engine.hh"

using reclaimstudy::DisksimEngine;
using reclaimstudy::DisksimTotals;

namespace {
struct Served { double arrival; bool write; uint64_t blkno; uint32_t sectors; double done; };

bool same(const DisksimTotals &a, const DisksimTotals &b)
{
    return a.seekMs == b.seekMs && a.rotationMs == b.rotationMs &&
        a.transferMs == b.transferMs && a.readMisses == b.readMisses &&
        a.writeMisses == b.writeMisses && a.fullReadHits == b.fullReadHits &&
        a.partialReadHits == b.partialReadHits && a.readingHits == b.readingHits &&
        a.appendHits == b.appendHits && a.prependHits == b.prependHits &&
        a.writeCombines == b.writeCombines;
}
}  // namespace

int main(int argc, char **argv)
{
    const char *parameters = argv[1], *valid = argv[2];
    const int n = std::atoi(argv[3]);
    DisksimEngine drive(parameters, "/dev/null", valid, 0, {});
    // A second instance in the same process, served in between, as a second spindle.
    DisksimEngine other(parameters, "/dev/null", valid, 0, {});
    std::vector<Served> log;
    std::vector<DisksimTotals> totals;
    double t = 1.0, otherAt = 0;
    unsigned long long x = 2026;
    for (int i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const bool write = (x >> 60) & 1;
        uint64_t blkno = (x >> 20) % 4000000;
        const uint32_t sectors = 8u << ((x >> 8) % 6);
        if ((x >> 40) % 3 == 0 && i)  // a third continue the previous request
            blkno = log.back().blkno + log.back().sectors;
        const double done = drive.serve(t, write, blkno, sectors);
        log.push_back({t, write, blkno, sectors, done});
        totals.push_back(drive.totals());
        otherAt = other.serve(otherAt + 0.5, !write, blkno / 3, sectors) ;
        // The next request: at once, or after the drive has had time of its own.
        t = done + 0.01 + ((x >> 30) % 4) * 0.3 * ((x >> 35) % 2);
    }
    int restores = 0, answers = 0, differing = 0, totalsDiffering = 0;
    for (int k = 1; k + 1 < n; k += n / 23) {
        for (int inside = 0; inside < 2; inside++) {
            // A checkpoint while request k is in flight, or between k and k + 1.
            const double at = inside ? (log[k].arrival + log[k].done) / 2 :
                (log[k].done + log[k + 1].arrival) / 2;
            DisksimEngine restored(parameters, "/dev/null", valid, 0, {});
            for (int i = 0; i <= k; i++)
                restored.replay(log[i].arrival, log[i].write, log[i].blkno, log[i].sectors);
            restored.advance(at);
            restores++;
            for (int i = k + 1; i < n && i <= k + 300; i++) {
                const double done = restored.serve(log[i].arrival, log[i].write,
                                                   log[i].blkno, log[i].sectors);
                answers++;
                differing += done != log[i].done;
                // Counted from the served drive's totals at the checkpoint: the same.
                totalsDiffering += !same(restored.totals() - totals[k], totals[i] - totals[k]);
            }
        }
    }
    std::printf("restores %d, answers %d, differing %d, totals differing %d\n", restores,
                answers, differing, totalsDiffering);
    // Another seed's offset: the log still reaches DiskSim in time order, and the drive
    // serves on from the restored tick.
    DisksimEngine shifted(parameters, "/dev/null", valid, 0, {});
    for (int i = 0; i < n / 2; i++)
        shifted.replay(log[i].arrival + 3.7, log[i].write, log[i].blkno, log[i].sectors);
    const double at = log[n / 2].arrival + 3.7;
    shifted.advance(at);
    shifted.serve(at, false, 5, 8);
    std::printf("shifted: ok\n");
    return 0;
}
