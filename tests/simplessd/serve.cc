// gem5-patches/0006's SimpleSSD engine (src/dev/storage/simplessd_engine.{hh,cc}, as the
// series leaves them, taken from the patches by tests/test_simplessd_gem5.py) outside
// gem5: one drive serving a list of commands at queue depth 1, as the IDE disk hands
// them over, behind a SATA link or (with "emmc", gem5-patches/0008) an eMMC bus.
//
//   serve SIMPLESSD.cfg [sata|emmc] < COMMANDS
//
// Each input line is "ARRIVAL R|W SECTOR SECTORS": ARRIVAL a tick, or "+GAP" for GAP
// ticks after the previous command completed. Prints "ARRIVAL R|W SECTOR SECTORS DONE
// LINK" a command (DONE its completion tick, LINK its time on the link),
// then "statistics N" and SimpleSSD's own statistics, one "name value" a line.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "dev/storage/simplessd_engine.hh"

int main(int argc, char **argv)
{
    using Front = reclaimstudy::SimplessdEngine::Front;
    const std::string link = argc == 3 ? argv[2] : "sata";
    if (argc < 2 || argc > 3 || (link != "sata" && link != "emmc")) {
        std::fprintf(stderr, "usage: serve SIMPLESSD.cfg [sata|emmc] < COMMANDS\n");
        return 2;
    }
    try {
        reclaimstudy::SimplessdEngine drive(
            argv[1], link == "emmc" ? Front::Emmc : Front::Sata);
        char when[32], kind;
        unsigned long long sector;
        unsigned sectors;
        uint64_t last = 0;
        while (std::scanf("%31s %c %llu %u", when, &kind, &sector, &sectors) == 4) {
            const uint64_t arrival = when[0] == '+'
                ? last + std::strtoull(when + 1, nullptr, 10)
                : std::strtoull(when, nullptr, 10);
            const auto s = drive.serve(arrival, kind == 'W', sector, sectors);
            last = s.done;
            std::printf("%" PRIu64 " %c %llu %u %" PRIu64 " %" PRIu64 "\n", arrival, kind,
                        sector, sectors, s.done, s.linkTicks);
        }
        const auto values = drive.statValues();
        std::printf("statistics %zu\n", values.size());
        for (size_t i = 0; i < values.size(); i++)
            std::printf("%s %.17g\n", drive.statNames()[i].c_str(), values[i]);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
