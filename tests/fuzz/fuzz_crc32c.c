/*
 * fuzz_crc32c.c - CRC-32C on arbitrary bytes, by every implementation.
 *
 * Input: byte 0 picks a split point and an alignment, the rest is data.
 * Checks: every implementation this CPU runs agrees with the portable
 * tables, and llog_crc32c_extend and llog_crc32c_extend_ahead (the chosen
 * one, fetching ahead or not) with both; extending
 * across a split equals one pass; the result does not depend on the
 * buffer's alignment; mask and unmask are inverse.
 */
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    llog_crc32c_init(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    unsigned pick = data[0];
    data++;
    size--;

    uint32_t crc = llog_crc32c_portable(0, data, size);
    FUZZ_CHECK(llog_crc32c_extend(0, data, size) == crc);
    FUZZ_CHECK(llog_crc32c_hardware(0, data, size) == crc);
    FUZZ_CHECK(llog_crc32c_extend_ahead(0, data, size) == crc);

    size_t cut = size ? (pick * 2654435761u) % (size + 1) : 0;
    /* The same bytes at another alignment, in an exactly sized buffer so
     * ASan catches any read past the end. */
    size_t shift = pick % 16;
    uint8_t *copy = malloc(size + shift + 1);
    FUZZ_CHECK(copy != NULL);
    memcpy(copy + shift, data, size);
    for (int i = 0; i < llog_crc32c_impl_count(); i++) {
        if (!llog_crc32c_impl_usable(i))
            continue;
        FUZZ_CHECK(llog_crc32c_impl_extend(i, 0, data, size) == crc);
        uint32_t head = llog_crc32c_impl_extend(i, 0, data, cut);
        FUZZ_CHECK(llog_crc32c_impl_extend(i, head, data + cut, size - cut) ==
                   crc);
        FUZZ_CHECK(llog_crc32c_impl_extend(i, 0, copy + shift, size) == crc);
    }
    uint32_t ahead = llog_crc32c_extend_ahead(0, copy + shift, cut);
    FUZZ_CHECK(llog_crc32c_extend_ahead(ahead, copy + shift + cut,
                                        size - cut) == crc);
    free(copy);

    FUZZ_CHECK(llog_unmask_crc(llog_mask_crc(crc)) == crc);
    FUZZ_CHECK(llog_mask_crc(llog_unmask_crc(crc)) == crc);
    return 0;
}
