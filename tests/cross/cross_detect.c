/*
 * cross_detect.c - the CRC-32C path the core picks by itself, checked
 * against what the CPU offers: AArch64 Linux reports the CRC32 and PMULL
 * instructions in AT_HWCAP. .ci/cross.sh runs it under QEMU for several
 * -cpu models, some with features hidden (hwcap_mask.c), and also checks
 * the path printed against a table of its own, so a broken probe is caught
 * by both.
 *
 * Prints "hwcap crc32=C pmull=P expected=NAME picked=NAME" and exits 1 when
 * the pick or the usable paths disagree with those bits, or a usable path
 * computes a wrong CRC (an instruction the CPU lacks would stop it first).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include "crc32c.h"

/* llog_crc32c_impl_usable of the path called name; -1 when not built. */
static int usable_named(const char *name) {
    for (int i = 0; i < llog_crc32c_impl_count(); i++)
        if (strcmp(llog_crc32c_impl_name(i), name) == 0)
            return llog_crc32c_impl_usable(i);
    return -1;
}

/* Every usable path gives the check value, and the portable path's CRC
 * over a buffer long enough for the three-stream blocks. */
static int usable_paths_agree(void) {
    static uint8_t data[3 * 16384 + 3 * 5440 + 100];
    uint32_t s = 1;
    for (size_t i = 0; i < sizeof data; i++) {
        s = s * 1664525u + 1013904223u;
        data[i] = (uint8_t)(s >> 24);
    }
    uint32_t want = llog_crc32c_portable(0, data, sizeof data);
    int ok = 1;
    for (int i = 0; i < llog_crc32c_impl_count(); i++) {
        if (!llog_crc32c_impl_usable(i))
            continue;
        ok &= llog_crc32c_impl_extend(i, 0, "123456789", 9) == 0xE3069283u;
        ok &= llog_crc32c_impl_extend(i, 0, data, sizeof data) == want;
    }
    return ok;
}

int main(void) {
    unsigned long hwcap = getauxval(AT_HWCAP);
    int crc32 = (hwcap & HWCAP_CRC32) != 0;
    int pmull = (hwcap & HWCAP_PMULL) != 0;
    const char *expected = !crc32  ? "portable"
                           : pmull ? "armv8-crc+pmull"
                                   : "armv8-crc";
    llog_crc32c_init(1);
    const char *picked = llog_crc32c_implementation();
    int ok = strcmp(picked, expected) == 0 && usable_named("portable") == 1 &&
             usable_named("armv8-crc") == crc32 &&
             usable_named("armv8-crc+pmull") == (crc32 && pmull) &&
             usable_paths_agree();
    printf("hwcap crc32=%d pmull=%d expected=%s picked=%s%s\n", crc32, pmull,
           expected, picked, ok ? "" : " MISMATCH");
    return ok ? 0 : 1;
}
