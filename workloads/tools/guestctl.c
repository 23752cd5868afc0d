/* guestctl: the guest protocol for shell scripts (the C workloads link guest.c).
 *   guestctl phase NAME   start phase NAME (ends the previous one; a stats block on gem5)
 *   guestctl done         end the last phase
 *   guestctl backend      print gem5, qemu or native
 *   guestctl poweroff     power the machine off (QEMU's way to end a job) */
#include <stdio.h>
#include <string.h>
#include <sys/reboot.h>
#include <unistd.h>

#include "guest.h"

static int usage(void)
{
	fprintf(stderr, "usage: guestctl phase NAME | done | backend | poweroff\n");
	return 2;
}

static int valid_name(const char *name)
{
	if (!*name)
		return 0;
	for (const char *c = name; *c; c++)
		if (!(('a' <= *c && *c <= 'z') || ('0' <= *c && *c <= '9') || *c == '_' || *c == '-'))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "phase")) {
		if (!valid_name(argv[2])) {
			fprintf(stderr, "guestctl: bad phase name '%s': use a-z, 0-9, '_' and '-'\n",
				argv[2]);
			return 2;
		}
		guest_phase(argv[2]);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "done")) {
		guest_phases_done();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "backend")) {
		puts(guest_backend_name(guest_backend()));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "poweroff")) {
		sync();
		reboot(RB_POWER_OFF);
		perror("guestctl: reboot(RB_POWER_OFF)");
		return 1;
	}
	return usage();
}
