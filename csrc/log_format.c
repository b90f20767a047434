/* log_format.c - status texts, from the one list in log_format.h. */
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
