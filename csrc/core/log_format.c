/* log_format.c - status texts, type, recovery-mode and dialect names, from
 * the lists in log_format.h. */
#include "log_format.h"

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

const char *llog_dialect_name(unsigned dialect) {
    static const char *const names[] = {
#define LLOG_DIALECT_TEXT(name, text) text,
        LLOG_DIALECT_LIST(LLOG_DIALECT_TEXT)
#undef LLOG_DIALECT_TEXT
    };
    return dialect < LLOG_DIALECT_COUNT ? names[dialect] : NULL;
}
