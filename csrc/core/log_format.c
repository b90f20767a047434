/* log_format.c - status texts, type and recovery-mode names, from the lists
 * in log_format.h, and the checksums of the type bytes. */
#include "log_format.h"

/* The C tests check these against llog_crc32c_extend of each byte. */
const uint32_t llog_type_crc[LLOG_MAX_TYPE + 1] = {
    0x527D5351u, 0xA016D052u, 0xB34623A6u, 0x412DA0A5u, 0x95E7C44Eu};

const char *llog_status_text(llog_status status) {
    switch (status) {
#define LLOG_STATUS_CASE(name, text)                                          \
    case name:                                                                \
        return text;
        LLOG_STATUS_LIST(LLOG_STATUS_CASE)
#undef LLOG_STATUS_CASE
    }
    return "unknown status";
}

const char *llog_type_name(unsigned type) {
    switch (type) {
#define LLOG_TYPE_CASE(name, value, text)                                     \
    case value:                                                               \
        return text;
        LLOG_TYPE_LIST(LLOG_TYPE_CASE)
#undef LLOG_TYPE_CASE
    }
    return NULL;
}

const char *llog_recovery_name(unsigned mode) {
    static const char *const names[] = {
#define LLOG_RECOVERY_TEXT(name, text) text,
        LLOG_RECOVERY_LIST(LLOG_RECOVERY_TEXT)
#undef LLOG_RECOVERY_TEXT
    };
    return mode < LLOG_RECOVERY_COUNT ? names[mode] : NULL;
}
