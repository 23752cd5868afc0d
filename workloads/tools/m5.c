/* m5: issue gem5 pseudo-operations from the guest (our own utility).
 *
 * On any backend but gem5 it is a harmless no-op: it says so and exits 0, since
 * the instruction form would fault and the address form would read the BIOS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"
#include "m5ops.h"

struct command {
	const char *name;
	enum m5_op op;
	const char *args; /* names of the numeric arguments, in order */
	int required;     /* how many of them must be given */
};

static const struct command commands[] = {
	{"exit", M5_EXIT, "DELAY_NS", 0},
	{"fail", M5_FAIL, "DELAY_NS CODE", 2},
	{"resetstats", M5_RESET_STATS, "DELAY_NS PERIOD_NS", 0},
	{"dumpstats", M5_DUMP_STATS, "DELAY_NS PERIOD_NS", 0},
	{"dumpresetstats", M5_DUMP_RESET_STATS, "DELAY_NS PERIOD_NS", 0},
	{"checkpoint", M5_CHECKPOINT, "DELAY_NS PERIOD_NS", 0},
	{"readfile", M5_READ_FILE, "", 0},
	{"writefile", M5_WRITE_FILE, "", 0},
	{"workbegin", M5_WORK_BEGIN, "WORKID THREADID", 0},
	{"workend", M5_WORK_END, "WORKID THREADID", 0},
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: m5 [--address|--instruction] [--force] [--dry-run] COMMAND [ARGS]\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-15s %s\n", commands[i].name,
			commands[i].op == M5_READ_FILE    ? "(the host's file to stdout)"
			: commands[i].op == M5_WRITE_FILE ? "LOCAL_FILE [HOST_NAME]"
							  : commands[i].args);
	fprintf(out, "--address      the load-from-0xFFFF0000 form through /dev/mem (default; works under KVM)\n"
		     "--instruction  the 0F 04 instruction form (atomic, timing and O3 CPUs)\n"
		     "--force        issue the op even when the backend is not gem5\n"
		     "--dry-run      print the op and its arguments instead of issuing it\n");
}

static int parse_number(const char *text, const char *what, uint64_t *value)
{
	char *end;
	errno = 0;
	if (*text == '-' || *text == 0)
		goto bad;
	*value = strtoull(text, &end, 0);
	if (errno || *end)
		goto bad;
	return 0;
bad:
	fprintf(stderr, "m5: bad %s '%s': expected a non-negative integer\n", what, text);
	return -1;
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int numeric_args(const struct command *c, int argc, char **argv, uint64_t args[6])
{
	char names[64], *save = NULL;
	int count = 0;
	strncpy(names, c->args, sizeof(names) - 1);
	names[sizeof(names) - 1] = 0;
	for (char *name = strtok_r(names, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
		if (count < argc) {
			if (parse_number(argv[count], name, &args[count]))
				return -1;
		} else if (count < c->required) {
			fprintf(stderr, "m5: %s needs %s\n", c->name, c->args);
			return -1;
		}
		count++;
	}
	if (argc > count) {
		fprintf(stderr, "m5: %s takes at most %d argument(s) (%s), got %d\n", c->name, count,
			*c->args ? c->args : "none", argc);
		return -1;
	}
	return 0;
}

static void print_op(const struct command *c, const uint64_t args[6])
{
	printf("op=0x%02x name=%s args=%llu,%llu,%llu,%llu,%llu,%llu\n", c->op, c->name,
	       (unsigned long long)args[0], (unsigned long long)args[1],
	       (unsigned long long)args[2], (unsigned long long)args[3],
	       (unsigned long long)args[4], (unsigned long long)args[5]);
}

static int readfile(void)
{
	static char chunk[1 << 16];
	uint64_t offset = 0;
	for (;;) {
		/* gem5 writes through the guest's page tables: touch the pages first. */
		memset(chunk, 0, sizeof(chunk));
		uint64_t args[6] = {(uintptr_t)chunk, sizeof(chunk), offset};
		uint64_t got = m5_call(M5_READ_FILE, args);
		if (got == 0 || got > sizeof(chunk))
			return 0;
		if (fwrite(chunk, 1, got, stdout) != got)
			return 1;
		offset += got;
	}
}

static int writefile(int argc, char **argv)
{
	if (argc < 1 || argc > 2) {
		fprintf(stderr, "m5: writefile needs LOCAL_FILE [HOST_NAME]\n");
		return 2;
	}
	FILE *f = fopen(argv[0], "rb");
	if (!f) {
		fprintf(stderr, "m5: cannot open '%s': %s\n", argv[0], strerror(errno));
		return 1;
	}
	const char *host_name = argc == 2 ? argv[1] : argv[0];
	static char chunk[1 << 16];
	uint64_t offset = 0;
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		uint64_t args[6] = {(uintptr_t)chunk, n, offset, (uintptr_t)host_name};
		m5_call(M5_WRITE_FILE, args);
		offset += n;
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	enum m5_form form = M5_FORM_ADDRESS;
	int force = 0, dry_run = 0, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--address"))
			form = M5_FORM_ADDRESS;
		else if (!strcmp(argv[i], "--instruction"))
			form = M5_FORM_INSTRUCTION;
		else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if (!strcmp(argv[i], "--dry-run"))
			dry_run = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "m5: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	const struct command *c = find(argv[i]);
	if (!c) {
		fprintf(stderr, "m5: unknown command '%s'\n", argv[i]);
		usage(stderr);
		return 2;
	}
	int nargs = argc - i - 1;
	char **rest = argv + i + 1;
	uint64_t args[6] = {0};
	if (c->op != M5_READ_FILE && c->op != M5_WRITE_FILE && numeric_args(c, nargs, rest, args))
		return 2;
	if (c->op == M5_READ_FILE && nargs) {
		fprintf(stderr, "m5: readfile takes no arguments\n");
		return 2;
	}
	if (dry_run) {
		print_op(c, args);
		return 0;
	}
	enum guest_backend backend = guest_backend();
	if (backend != BACKEND_GEM5 && !force) {
		fprintf(stderr, "m5: backend is %s, not gem5: '%s' not issued\n",
			guest_backend_name(backend), c->name);
		return 0;
	}
	int err = m5_open(form);
	if (err) {
		fprintf(stderr, "m5: cannot map the m5 page at 0x%lx through /dev/mem: %s\n",
			M5_ADDRESS_BASE, strerror(-err));
		return 1;
	}
	if (c->op == M5_READ_FILE)
		return readfile();
	if (c->op == M5_WRITE_FILE)
		return writefile(nargs, rest);
	m5_call(c->op, args);
	return 0;
}
