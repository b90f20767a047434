/*
 * hwcap_mask.c - hides AArch64 CPU features from the CRC-32C probe, so that
 * .ci/cross.sh can run the C tests under QEMU as on a CPU without PMULL or
 * without the CRC32 instructions: every QEMU model offers both, and the
 * core picks its path from AT_HWCAP (crc32c_arm.c).
 *
 * Linked into a test program with -Wl,--wrap=getauxval, which sends every
 * getauxval call of the other object files here. LLOG_CROSS_HIDE lists the
 * features to clear from AT_HWCAP, comma-separated: "crc32", "pmull" (unset
 * or empty: none). An unknown name stops the program, so that a typo in
 * the script cannot quietly test the full CPU instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

unsigned long __real_getauxval(unsigned long type);
unsigned long __wrap_getauxval(unsigned long type);

/* 1 when the n characters at s are name. */
static int named(const char *s, size_t n, const char *name) {
    return strlen(name) == n && strncmp(s, name, n) == 0;
}

/* The AT_HWCAP bits of the features in list. */
static unsigned long hidden_bits(const char *list) {
    unsigned long bits = 0;
    for (const char *s = list; *s != '\0';) {
        size_t n = strcspn(s, ",");
        if (named(s, n, "crc32")) {
            bits |= HWCAP_CRC32;
        } else if (named(s, n, "pmull")) {
            bits |= HWCAP_PMULL;
        } else if (n > 0) {
            fprintf(stderr,
                    "hwcap_mask: LLOG_CROSS_HIDE=%s: unknown feature\n", list);
            exit(2);
        }
        s += s[n] == ',' ? n + 1 : n;
    }
    return bits;
}

unsigned long __wrap_getauxval(unsigned long type) {
    unsigned long value = __real_getauxval(type);
    const char *hide = getenv("LLOG_CROSS_HIDE");
    if (type == AT_HWCAP && hide != NULL)
        value &= ~hidden_bits(hide);
    return value;
}
