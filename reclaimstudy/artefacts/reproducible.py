"""One fixed moment for everything the study builds, so a kernel or image built on any
machine, on any day, is the same bytes as on any other.

It matters beyond checksums: Linux seeds its random pool with the kernel's version
string, build date and build host included (random_init_early mixes in init_utsname()),
so two builds of the same source differ in every random choice the guest makes
(address-space layout, hash seeds), and a published run made again on a new machine
came out different (2026-11-28: ebizzy's first phase 0.01% in instructions, a later one
13% in cycles). And the guest mounts its root with relatime, so files' access times
decide which reads write an inode back.
"""

import time

# 2011-12-31 12:00:00 UTC: twelve hours before the time gem5's x86 RTC starts the guest
# at (Cmos.time, 01/01/2012), so every file in the image was last changed and read within
# the day before boot, as on a desktop in use: relatime writes no access time back.
EPOCH = 1325332800
# Access times a minute later than modification and change times (relatime updates an
# access time that is not newer than both).
ATIME = EPOCH + 60
BUILDER = "reclaimstudy"


def kernel_build_env() -> dict[str, str]:
    """kbuild's variables for a build that does not depend on when or where it ran."""
    return {"KBUILD_BUILD_TIMESTAMP": time.strftime("%a %b %d %H:%M:%S UTC %Y",
                                                    time.gmtime(EPOCH)),
            "KBUILD_BUILD_USER": BUILDER, "KBUILD_BUILD_HOST": BUILDER,
            "KBUILD_BUILD_VERSION": "1"}
