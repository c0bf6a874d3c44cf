/*
 * aspects_crash.h — the layout of the crash recorder's stack file, DIR/crash-PID.stack, shared
 * by the preload that writes it in a dying process (crash.c) and aspectctl that unwinds it
 * afterwards (CrashStack.swift), possibly on another machine of another architecture: an
 * x86-64 aspectctl reads the dumps of aarch64 programs run under qemu, and the files can be
 * copied. So the file says which architecture it is, and the reader goes by that.
 *
 * 64-bit little-endian words (both architectures are little-endian): the magic, the ELF
 * machine of the process, the interrupted PC, SP, frame pointer (rbp, x29) and link register
 * (x30; 0 on x86-64, which has none: a call pushes its return address), then the stack itself
 * from SP rounded down to 8, up. A dump of another version is refused, not guessed at: the
 * preload and aspectctl ship together.
 */
#ifndef ASPECTS_CRASH_H
#define ASPECTS_CRASH_H

#define ASPECTS_CRASH_STACK_MAGIC "ASPSTK2\n"

/* The header's words, by index (word 0 is the magic). */
enum {
    ASPECTS_CRASH_WORD_MACHINE = 1,
    ASPECTS_CRASH_WORD_PC = 2,
    ASPECTS_CRASH_WORD_SP = 3,
    ASPECTS_CRASH_WORD_FP = 4,
    ASPECTS_CRASH_WORD_LR = 5,
    ASPECTS_CRASH_HEADER_WORDS = 6
};

/* The machines, as <elf.h> numbers them (EM_X86_64, EM_AARCH64; abi_asserts.c checks): the
 * dump's machine word, and what preflight compares a program's e_machine with. */
#define ASPECTS_ELF_MACHINE_X86_64 62u
#define ASPECTS_ELF_MACHINE_AARCH64 183u

#endif
