// DiskSim standalone, for tests/test_disksim_gem5.py: replays a request log through
// DiskSim's embedding interface as DiskSim's own example driver does
// (src/syssim_driver.c: one callback pending; DiskSim's events run in time order), with
// each request arriving at its logged time, and prints when each completed. Nothing of
// gem5 or of gem5-patches/0005 is in it: it is the reference the gem5 drive is held to.
//
//   replay PARAMETERS [COMPONENT PARAMETER VALUE]... < LOG
//
// (LOG: gem5's disksim-requests-N.txt; LP_PATH set; the triples: DiskSim's overrides, as
// the profile gives them to gem5.)
//
// LOG's lines: KIND SEQ TICK ARRIVAL_MS R|W BLKNO SECTORS DONE_MS. Prints, per request,
// "SEQ DONE_MS" (%.17g: the double itself).
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <string>

#include "disksim_interface.h"

namespace {
double nextEvent = -1;
std::map<long, double> done;

void schedule(disksim_interface_callback_t, double t, void *) { nextEvent = t; }
void deschedule(double, void *) { nextEvent = -1; }
void complete(double t, disksim_request *r, void *)
{
    done[long(reinterpret_cast<intptr_t>(r->reqctx))] = t;
}
}  // namespace

int main(int argc, char **argv)
{
    if (argc < 2 || (argc - 2) % 3) {
        std::fprintf(stderr, "usage: %s PARAMETERS [COMPONENT PARAMETER VALUE]... < LOG\n",
                     argv[0]);
        return 2;
    }
    disksim_interface *d = disksim_interface_initialize(
        argv[1], "/dev/null", complete, schedule, deschedule, nullptr, argc - 2, argv + 2);
    std::deque<disksim_request> requests;  // each lives until DiskSim completes it
    char kind[16], rw;
    long seq;
    unsigned long long tick, blkno;
    unsigned sectors;
    double arrival, logged;
    while (std::scanf("%15s %ld %llu %lf %c %llu %u %lf", kind, &seq, &tick, &arrival, &rw,
                      &blkno, &sectors, &logged) == 8) {
        while (nextEvent >= 0 && nextEvent <= arrival) {
            const double t = nextEvent;
            nextEvent = -1;
            disksim_interface_internal_event(d, t, nullptr);
        }
        requests.emplace_back();
        disksim_request &r = requests.back();
        r = disksim_request{};
        r.flags = rw == 'W' ? DISKSIM_WRITE : DISKSIM_READ;
        r.devno = 0;
        r.blkno = blkno;
        r.bytecount = int(sectors);
        r.start = arrival;
        r.reqctx = reinterpret_cast<void *>(intptr_t(seq));
        disksim_interface_request_arrive(d, arrival, &r);
    }
    while (nextEvent >= 0) {
        const double t = nextEvent;
        nextEvent = -1;
        disksim_interface_internal_event(d, t, nullptr);
    }
    for (const auto &[s, t] : done)
        std::printf("%ld %.17g\n", s, t);
    return 0;
}
