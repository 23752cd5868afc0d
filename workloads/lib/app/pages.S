/* The bulk of an application's text: NPAGES page-aligned functions, each a `ret`
 * padded to a full page. Calling one faults in exactly one file-backed VM_EXEC page
 * at the cost of two instructions. NPAGES comes from the build (--defsym). */
	.section .text.app_pages,"ax",@progbits
	.globl app_pages
	.globl app_npages
	.p2align 12
app_pages:
	.rept NPAGES
	ret
	.fill 4095, 1, 0xcc
	.endr
	.section .rodata
	.p2align 3
app_npages:
	.quad NPAGES
	.section .note.GNU-stack,"",@progbits
