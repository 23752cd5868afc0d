/* gem5 pseudo-operations from an x86-64 guest. Our own implementation of the
 * documented ABI: arguments in rdi, rsi, rdx, rcx, r8, r9; result in rax. */
#ifndef RECLAIM_M5OPS_H
#define RECLAIM_M5OPS_H

#include <stdint.h>

enum m5_op {
	M5_EXIT = 0x21,
	M5_FAIL = 0x22,
	M5_RESET_STATS = 0x40,
	M5_DUMP_STATS = 0x41,
	M5_DUMP_RESET_STATS = 0x42,
	M5_CHECKPOINT = 0x43,
	M5_WRITE_FILE = 0x4f,
	M5_READ_FILE = 0x50,
	M5_WORK_BEGIN = 0x5a,
	M5_WORK_END = 0x5b,
};

enum m5_form {
	M5_FORM_ADDRESS,     /* a load from 0xFFFF0000 + (op << 8) via /dev/mem: works under KVM too */
	M5_FORM_INSTRUCTION, /* the 0F 04 <op16> instruction: atomic/timing/O3 CPUs only */
};

#define M5_ADDRESS_BASE 0xFFFF0000UL
#define M5_ADDRESS_SIZE 0x10000UL

/* Map the pseudo-op page (address form). Returns 0, or -errno. */
int m5_open(enum m5_form form);
/* Issue `op` with up to 6 arguments; returns rax. m5_open() first. */
uint64_t m5_call(enum m5_op op, const uint64_t args[6]);

#endif
