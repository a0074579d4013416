/* json.h - the JSON helpers every module shares, over cJSON.
 *
 * Parsing a file's text gives an error that names the file, the line and
 * the column where cJSON gave up; writing a number that is not finite
 * writes null (JSON has no NaN).  Trees are cJSON's: the caller frees
 * what pm_json_parse returns with cJSON_Delete(). */
#ifndef PERFMON_JSON_H
#define PERFMON_JSON_H

#include <stddef.h>

#include "perfmon/error.h"

struct cJSON;

/* 1-based line and column (in bytes) of offset in text, counting no
 * further than len bytes. */
void pm_text_position(const char *text, size_t len, size_t offset, int *line, int *col);

/* Parse len bytes of text (read from path) with cJSON; NULL when they are
 * not JSON, with err "path:line:col: what" at the byte where cJSON gave up
 * (what says what was expected, e.g. "malformed JSON").  text[len] must be
 * readable: when it is the NUL that ends the text (pm_read_whole leaves
 * one), a text cut short fails at the column just past its last byte. */
struct cJSON *pm_json_parse(const char *path, const char *text, size_t len, const char *what,
                            pm_error *err) PM_WUR;

/* Add v to object o under key k, or null when v is NaN or infinite. */
void pm_json_num(struct cJSON *o, const char *k, double v);

#endif
