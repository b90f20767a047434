/*
 * test_format.c - the format's tables and texts (log_format.h,
 * log_header.h): the CRCs of the type bytes, the status texts.
 */
#include "crc32c.h"
#include "harness.h"

static void test_type_crcs_are_the_crcs_of_the_type_bytes(void) {
    for (int i = 0; i < llog_crc32c_impl_count(); i++) {
        if (!llog_crc32c_impl_usable(i))
            continue;
        for (uint32_t t = 0; t <= LLOG_MAX_TYPE; t++) {
            uint8_t byte = (uint8_t)t;
            CHECK_EQ(llog_type_crc[t],
                     llog_crc32c_impl_extend(i, 0, &byte, 1));
        }
    }
}

static void test_status_texts(void) {
    CHECK_STR(llog_status_text(LLOG_OK), "ok");
    CHECK_STR(llog_status_text(LLOG_ERR_NOMEM), "out of memory");
    CHECK_STR(llog_status_text(LLOG_ERR_ARG), "invalid argument");
    CHECK_STR(llog_status_text(LLOG_ERR_TOO_LARGE),
              "record too large for this platform");
    CHECK(llog_status_text((llog_status)99) != NULL);
}

void suite_format(void) {
    RUN(test_type_crcs_are_the_crcs_of_the_type_bytes);
    RUN(test_status_texts);
}
