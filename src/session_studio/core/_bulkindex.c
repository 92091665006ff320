/* The common case of Session._load_common in C (an optional speed-up; the Python loop is the
 * reference and runs whenever this module is missing or SESSION_STUDIO_PURE_PYTHON is set).
 *
 * index_common() pulls RawValues and LineRuns (lines read whole, parsed here with the reader's
 * `loads`, see reader.values_of_run) from an iterator (the reader's generator) and, for an entry
 * of the usual shape (a dict with a string type other than session/label, pi's 8-hex id, an
 * 8-hex or null parentId, a timestamp in pi's ISO form and, for a message, a dict message
 * with a string role), computes what the Python loop computes: pi 0.80.2's token estimate
 * (tokens.py `_fast_estimate`: UTF-16 lengths, JSON.stringify lengths of tool arguments) and
 * the assistant's usage tokens (the positive-integer totalTokens branch), and appends them to
 * column buffers (floats in tool arguments are measured as JavaScript prints them, from
 * Python's shortest round-trip digits). Anything else -- and any value the estimate is not
 * certain about (an integer past 2**53, a lone surrogate, deep nesting, an odd block) -- is
 * handed to `fallback(raw)` after the buffers are flushed, so records stay in file order and
 * the Python code decides every case this file does not.
 *
 * A LineRun's lines are first read by the line scanner (index_scanned, below): most of pi's entries
 * give their facts straight from their bytes, never built as Python objects; a line it does not
 * read exactly goes the parsed way (orjson's value, then as above).
 *
 * The columns are flushed as bytes in RecordTable.column_bytes() order (COLUMNS, the
 * timestamps packed as record_table.pack_timestamp packs them last) through `flush(tuple_of_bytes)`.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

#define N_COLUMNS 11 /* lines offsets lengths types roles ids parents tokens usage flags stamps */
enum { C_LINES, C_OFFSETS, C_LENGTHS, C_TYPES, C_ROLES, C_IDS, C_PARENTS, C_TOKENS, C_USAGE, C_FLAGS, C_STAMPS };
#define FLUSH_EVERY 8192
#define MAX_DEPTH 200
#define EXACT_LIMIT 9007199254740992LL /* 2**53: tokens and usage beyond it go the Python way */
#define IMAGE_CHARS 4800

enum { OK = 0, BAIL = 1, FAIL = -1 };

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

static int buf_put(Buf *b, const void *src, Py_ssize_t n) {
    if (b->len + n > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        char *d = PyMem_Realloc(b->data, (size_t)cap);
        if (d == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

/* interned keys and strings, made once */
static PyObject *s_line, *s_offset, *s_length, *s_value, *s_type, *s_id, *s_parentId, *s_timestamp,
    *s_message, *s_role, *s_content, *s_text, *s_thinking, *s_toolCall, *s_name, *s_arguments, *s_image,
    *s_usage, *s_stopReason, *s_totalTokens, *s_command, *s_output, *s_summary, *s_input, *s_cacheRead,
    *s_cacheWrite, *s_chunk, *s_start, *s_end, *s_issues, *s_nestedCalls, *s_path;

static int intern_all(void) {
#define I(var, text) \
    if ((var = PyUnicode_InternFromString(text)) == NULL) return -1;
    I(s_line, "line") I(s_offset, "offset") I(s_length, "length") I(s_value, "value") I(s_type, "type")
    I(s_id, "id") I(s_parentId, "parentId") I(s_timestamp, "timestamp") I(s_message, "message")
    I(s_role, "role") I(s_content, "content") I(s_text, "text") I(s_thinking, "thinking")
    I(s_toolCall, "toolCall") I(s_name, "name") I(s_arguments, "arguments") I(s_image, "image")
    I(s_usage, "usage") I(s_stopReason, "stopReason") I(s_totalTokens, "totalTokens")
    I(s_command, "command") I(s_output, "output") I(s_summary, "summary") I(s_input, "input")
    I(s_cacheRead, "cacheRead") I(s_cacheWrite, "cacheWrite") I(s_chunk, "chunk") I(s_start, "start")
    I(s_end, "end") I(s_issues, "issues") I(s_nestedCalls, "nestedCalls") I(s_path, "path")
#undef I
    return 0;
}

/* an exact str equal to an ASCII literal */
static int str_is(PyObject *s, const char *lit) {
    return PyUnicode_CheckExact(s) && PyUnicode_CompareWithASCIIString(s, lit) == 0;
}

/* JavaScript s.length: UTF-16 code units (a lone surrogate in a Python str counts one, as in JS) */
static int64_t u16len(PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int64_t units = n;
    if (PyUnicode_KIND(s) == PyUnicode_4BYTE_KIND) {
        const Py_UCS4 *d = PyUnicode_4BYTE_DATA(s);
        for (Py_ssize_t i = 0; i < n; i++) units += d[i] > 0xFFFF;
    }
    return units;
}

/* len(JSON.stringify(s)) for a str: quotes, escapes, astral pairs; BAIL on a surrogate code point */
static int json_str_len(PyObject *s, int64_t *out) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    int64_t units = 2;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x20)
            units += (c == 8 || c == 9 || c == 10 || c == 12 || c == 13) ? 2 : 6;
        else if (c == '"' || c == '\\')
            units += 2;
        else if (c < 0x80)
            units += 1;
        else if (c >= 0xD800 && c <= 0xDFFF)
            return BAIL; /* JSON.stringify pairs or escapes surrogates: leave it to Python */
        else
            units += c > 0xFFFF ? 2 : 1;
    }
    *out += units;
    return OK;
}

static int64_t decimal_digits(int64_t u) {
    int64_t d = 1;
    while (u >= 10) {
        u /= 10;
        d++;
    }
    return d;
}

/* len of ECMAScript Number::toString(x) for a finite double (jsvalue.js_number_to_string): the
   shortest round-trip digits are Python's repr digits; only the layout differs */
static int js_double_len(double x, int64_t *out) {
    if (x != x || x - x != 0) return BAIL; /* NaN or an infinity: never from JSON, leave it */
    if (x == 0) {
        *out += 1; /* "0", also for -0 */
        return OK;
    }
    int64_t sign = x < 0;
    char *r = PyOS_double_to_string(x < 0 ? -x : x, 'r', 0, 0, NULL);
    if (r == NULL) return FAIL;
    /* r is "ddd.ddd" or "d.ddde+XX" / "de-XX": collect the digits and the point's position */
    char digits[64];
    int k = 0, point = -1, exp = 0;
    const char *c = r;
    for (; *c && *c != 'e'; c++) {
        if (*c == '.')
            point = k;
        else if (k < (int)sizeof digits)
            digits[k++] = *c;
    }
    if (*c == 'e') exp = atoi(c + 1);
    PyMem_Free(r);
    if (k >= (int)sizeof digits) return BAIL;
    if (point < 0) point = k;
    /* a trailing ".0" is not a digit */
    if (point == k - 1 && digits[k - 1] == '0') k--;
    int64_t n = point + exp;
    int lead = 0;
    while (lead < k && digits[lead] == '0') lead++;
    n -= lead;
    int end = k;
    while (end > lead && digits[end - 1] == '0') end--;
    int64_t nd = end - lead;
    if (nd == 0) nd = 1;
    int64_t len;
    if (nd <= n && n <= 21)
        len = n;
    else if (0 < n && n <= 21)
        len = nd + 1;
    else if (-6 < n && n <= 0)
        len = 2 - n + nd;
    else {
        int64_t e = n - 1;
        len = (nd > 1 ? nd + 1 : 1) + 2 + decimal_digits(e < 0 ? -e : e);
    }
    *out += sign + len;
    return OK;
}

static int json_len(PyObject *v, int depth, int64_t *out);

static int json_len(PyObject *v, int depth, int64_t *out) {
    if (depth > MAX_DEPTH) return BAIL;
    if (PyUnicode_CheckExact(v)) return json_str_len(v, out);
    if (v == Py_None || v == Py_True) {
        *out += 4;
        return OK;
    }
    if (v == Py_False) {
        *out += 5;
        return OK;
    }
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) return FAIL;
        if (overflow || x > EXACT_LIMIT || x < -EXACT_LIMIT) {
            /* JSON.parse made it the nearest double, and that is what JSON.stringify prints */
            double d = PyLong_AsDouble(v);
            if (d == -1.0 && PyErr_Occurred()) {
                PyErr_Clear(); /* past the doubles: Infinity in JS; left to Python */
                return BAIL;
            }
            return js_double_len(d, out);
        }
        *out += (x < 0) + decimal_digits(x < 0 ? -x : x);
        return OK;
    }
    if (PyDict_CheckExact(v)) {
        Py_ssize_t pos = 0, n = PyDict_GET_SIZE(v);
        PyObject *key, *item;
        *out += 2 + (n > 0 ? n - 1 : 0) + n; /* braces, commas, colons */
        while (PyDict_Next(v, &pos, &key, &item)) {
            if (!PyUnicode_CheckExact(key)) return BAIL;
            int r = json_str_len(key, out);
            if (r != OK) return r;
            r = json_len(item, depth + 1, out);
            if (r != OK) return r;
        }
        return OK;
    }
    if (PyList_CheckExact(v)) {
        Py_ssize_t n = PyList_GET_SIZE(v);
        *out += 2 + (n > 0 ? n - 1 : 0);
        for (Py_ssize_t i = 0; i < n; i++) {
            int r = json_len(PyList_GET_ITEM(v, i), depth + 1, out);
            if (r != OK) return r;
        }
        return OK;
    }
    if (PyFloat_CheckExact(v)) return js_double_len(PyFloat_AS_DOUBLE(v), out);
    return BAIL;
}

/* a required str member of a dict block (BAIL when missing or not a str) */
static int add_str_member(PyObject *block, PyObject *key, int64_t *chars) {
    PyObject *s = PyDict_GetItemWithError(block, key);
    if (s == NULL) return PyErr_Occurred() ? FAIL : BAIL;
    if (!PyUnicode_CheckExact(s)) return BAIL;
    *chars += u16len(s);
    return OK;
}

/* pi 0.80.2's estimateTokens(message) for the shapes tokens.py's _fast_estimate takes
   (plus bashExecution and the two summary roles); BAIL for everything it leaves to the exact path */
static int estimate(PyObject *msg, PyObject *role, int64_t *tokens) {
    int64_t chars = 0;
    int r;
    if (str_is(role, "assistant")) {
        PyObject *content = PyDict_GetItemWithError(msg, s_content);
        if (content == NULL) return PyErr_Occurred() ? FAIL : BAIL;
        if (!PyList_CheckExact(content)) return BAIL;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content); i++) {
            PyObject *block = PyList_GET_ITEM(content, i);
            if (!PyDict_CheckExact(block)) return BAIL;
            PyObject *t = PyDict_GetItemWithError(block, s_type);
            if (t == NULL) return PyErr_Occurred() ? FAIL : BAIL;
            if (!PyUnicode_CheckExact(t)) continue; /* never === "text" etc.: no characters */
            if (str_is(t, "text")) {
                if ((r = add_str_member(block, s_text, &chars)) != OK) return r;
            } else if (str_is(t, "thinking")) {
                if ((r = add_str_member(block, s_thinking, &chars)) != OK) return r;
            } else if (str_is(t, "toolCall")) {
                if ((r = add_str_member(block, s_name, &chars)) != OK) return r;
                PyObject *args = PyDict_GetItemWithError(block, s_arguments);
                if (args == NULL) return PyErr_Occurred() ? FAIL : BAIL;
                if (!PyDict_CheckExact(args)) return BAIL;
                if ((r = json_len(args, 0, &chars)) != OK) return r;
            }
        }
    } else if (str_is(role, "user") || str_is(role, "toolResult") || str_is(role, "custom")) {
        PyObject *content = PyDict_GetItemWithError(msg, s_content);
        if (content == NULL) return PyErr_Occurred() ? FAIL : BAIL;
        if (PyUnicode_CheckExact(content)) {
            chars = u16len(content);
        } else if (PyList_CheckExact(content)) {
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content); i++) {
                PyObject *block = PyList_GET_ITEM(content, i);
                if (!PyDict_CheckExact(block)) return BAIL;
                PyObject *t = PyDict_GetItemWithError(block, s_type);
                if (t == NULL) return PyErr_Occurred() ? FAIL : BAIL;
                if (!PyUnicode_CheckExact(t)) continue;
                if (str_is(t, "text")) {
                    /* pi adds text.length only when text is truthy: "" adds nothing either way */
                    if ((r = add_str_member(block, s_text, &chars)) != OK) return r;
                } else if (str_is(t, "image")) {
                    chars += IMAGE_CHARS;
                }
            }
        } else {
            return BAIL;
        }
    } else if (str_is(role, "bashExecution")) {
        if ((r = add_str_member(msg, s_command, &chars)) != OK) return r;
        if ((r = add_str_member(msg, s_output, &chars)) != OK) return r;
    } else if (str_is(role, "branchSummary") || str_is(role, "compactionSummary")) {
        if ((r = add_str_member(msg, s_summary, &chars)) != OK) return r;
    }
    /* any other role: pi counts 0 */
    *tokens = (chars + 3) / 4;
    return OK;
}

/* an exact int (not a bool) within +-2**53 */
static int int_value(PyObject *v, long long *out) {
    if (!PyLong_CheckExact(v)) return BAIL;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return BAIL;
    }
    if (overflow || x > EXACT_LIMIT || x < -EXACT_LIMIT) return BAIL;
    *out = x;
    return OK;
}

/* the assistant's usage tokens, common branch only: *has = 0 for "no valid usage" */
static int usage_tokens(PyObject *msg, int *has, int64_t *total_out) {
    *has = 0;
    PyObject *usage = PyDict_GetItemWithError(msg, s_usage);
    if (usage == NULL) return PyErr_Occurred() ? FAIL : OK; /* no usage */
    PyObject *stop = PyDict_GetItemWithError(msg, s_stopReason);
    if (stop == NULL && PyErr_Occurred()) return FAIL;
    if (stop != NULL && (str_is(stop, "aborted") || str_is(stop, "error"))) return OK;
    if (!PyDict_CheckExact(usage)) return BAIL;
    /* calculateContextTokens: totalTokens if truthy, else input + output + cacheRead + cacheWrite */
    PyObject *total = PyDict_GetItemWithError(usage, s_totalTokens);
    if (total == NULL && PyErr_Occurred()) return FAIL;
    long long x;
    long long given = 1;
    int zero = total != NULL && int_value(total, &given) == OK && given == 0;
    if (total == NULL || total == Py_None || zero) {
        PyObject *parts[4] = {s_input, s_output, s_cacheRead, s_cacheWrite};
        x = 0;
        for (int i = 0; i < 4; i++) {
            PyObject *part = PyDict_GetItemWithError(usage, parts[i]);
            if (part == NULL) return PyErr_Occurred() ? FAIL : BAIL; /* undefined: NaN in JS */
            long long y;
            if (int_value(part, &y) != OK) return BAIL;
            x += y;
        }
        if (x <= 0) return OK; /* not > 0: no valid usage */
    } else if (int_value(total, &x) != OK) {
        return BAIL;
    } else if (x <= 0) {
        return BAIL; /* a truthy non-positive total: the Python path decides */
    }
    if (x > EXACT_LIMIT) return BAIL;
    *has = 1;
    *total_out = x;
    return OK;
}

/* pi's id form: 8 lowercase hex digits */
static int hex8_bytes(const unsigned char *d, Py_ssize_t n, int64_t *out) {
    if (n != 8) return 0;
    int64_t v = 0;
    for (int i = 0; i < 8; i++) {
        int c = d[i], x;
        if (c >= '0' && c <= '9')
            x = c - '0';
        else if (c >= 'a' && c <= 'f')
            x = c - 'a' + 10;
        else
            return 0;
        v = v * 16 + x;
    }
    *out = v;
    return 1;
}

static int hex8(PyObject *s, int64_t *out) {
    if (!PyUnicode_CheckExact(s) || !PyUnicode_IS_ASCII(s)) return 0;
    return hex8_bytes(PyUnicode_1BYTE_DATA(s), PyUnicode_GET_LENGTH(s), out);
}

/* record_table.pack_timestamp: pi's "2025-10-19T22:39:25.412Z" as the int of its 17 digits */
static int pack_stamp_bytes(const unsigned char *d, Py_ssize_t n, int64_t *out) {
    static const char layout[] = "dddd-dd-ddTdd:dd:dd.dddZ";
    if (n != 24) return 0;
    int64_t v = 0;
    for (int i = 0; i < 24; i++) {
        if (layout[i] == 'd') {
            if (d[i] < '0' || d[i] > '9') return 0;
            v = v * 10 + (d[i] - '0');
        } else if (d[i] != layout[i]) {
            return 0;
        }
    }
    *out = v;
    return 1;
}

static int pack_stamp(PyObject *s, int64_t *out) {
    if (!PyUnicode_CheckExact(s) || !PyUnicode_IS_ASCII(s)) return 0;
    return pack_stamp_bytes(PyUnicode_1BYTE_DATA(s), PyUnicode_GET_LENGTH(s), out);
}

typedef struct {
    Buf cols[N_COLUMNS];
    Py_ssize_t pending;
    PyObject *flush; /* borrowed */
    /* file_op_index's columns of the pending rows whose file operations are settled: the row (of
       the pending ones), the end of its operations in op_codes, each operation (path code << 2 | kind) */
    Buf op_rows, op_ends, op_codes;
    int64_t n_op_codes;
} Columns;

static int flush_columns(Columns *c) {
    if (c->pending == 0) return 0;
    PyObject *tuple = PyTuple_New(N_COLUMNS);
    if (tuple == NULL) return -1;
    for (int i = 0; i < N_COLUMNS; i++) {
        PyObject *b = PyBytes_FromStringAndSize(c->cols[i].data, c->cols[i].len);
        if (b == NULL) {
            Py_DECREF(tuple);
            return -1;
        }
        PyTuple_SET_ITEM(tuple, i, b);
        c->cols[i].len = 0;
    }
    c->pending = 0;
    PyObject *ops = Py_None;
    if (c->op_rows.len) {
        ops = Py_BuildValue("(y#y#y#)", c->op_rows.data, c->op_rows.len, c->op_ends.data, c->op_ends.len,
                            c->op_codes.data, c->op_codes.len);
        c->op_rows.len = c->op_ends.len = c->op_codes.len = 0;
        c->n_op_codes = 0;
        if (ops == NULL) {
            Py_DECREF(tuple);
            return -1;
        }
    } else
        Py_INCREF(ops);
    PyObject *r = PyObject_CallFunctionObjArgs(c->flush, tuple, ops, NULL);
    Py_DECREF(tuple);
    Py_DECREF(ops);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

/* code of a str type or role: the table's symbol code, cached in `codes` */
static int code_of(PyObject *codes, PyObject *symbol, PyObject *s, uint32_t *out) {
    PyObject *code = PyDict_GetItemWithError(codes, s);
    if (code == NULL) {
        if (PyErr_Occurred()) return -1;
        code = PyObject_CallOneArg(symbol, s);
        if (code == NULL) return -1;
        int r = PyDict_SetItem(codes, s, code);
        Py_DECREF(code);
        if (r < 0) return -1;
    }
    unsigned long x = PyLong_AsUnsignedLong(code);
    if (x == (unsigned long)-1 && PyErr_Occurred()) return -1;
    *out = (uint32_t)x;
    return 0;
}

static int get_i64(PyObject *raw, PyObject *name, int64_t *out) {
    PyObject *v = PyObject_GetAttr(raw, name);
    if (v == NULL) return -1;
    long long x = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    *out = x;
    return 0;
}

/* what index_common passes down (all borrowed) */
typedef struct {
    PyObject *codes, *symbol, *fallback, *run_type, *raw_type, *loads, *decode_error, *line_fallback;
    PyObject *paths, *path_codes; /* file_op_index's paths (a list) and their codes (a dict) */
    uint8_t flags_tokens, flags_usage, flags_file_op;
    int64_t id_null;
} Ctx;

/* a record's row into the column buffers: OK, or FAIL (no memory) */
static int append_row(Ctx *x, Columns *c, int64_t line, int64_t offset, int64_t length, uint32_t type_code,
                      uint32_t role_code, int64_t id, int64_t parent, int64_t tokens, int has_usage, int64_t usage,
                      int64_t stamp, int file_op) {
    double tokens_d = (double)tokens, usage_d = has_usage ? (double)usage : 0.0;
    uint8_t flags = x->flags_tokens | (has_usage ? x->flags_usage : 0) | (file_op ? x->flags_file_op : 0);
    if (buf_put(&c->cols[C_LINES], &line, 8) || buf_put(&c->cols[C_OFFSETS], &offset, 8) ||
        buf_put(&c->cols[C_LENGTHS], &length, 8) || buf_put(&c->cols[C_TYPES], &type_code, 4) ||
        buf_put(&c->cols[C_ROLES], &role_code, 4) || buf_put(&c->cols[C_IDS], &id, 8) ||
        buf_put(&c->cols[C_PARENTS], &parent, 8) || buf_put(&c->cols[C_TOKENS], &tokens_d, 8) ||
        buf_put(&c->cols[C_USAGE], &usage_d, 8) || buf_put(&c->cols[C_FLAGS], &flags, 1) ||
        buf_put(&c->cols[C_STAMPS], &stamp, 8))
        return FAIL;
    c->pending++;
    return OK;
}

/* an operation of the row just appended: its path's code (file_op_index.paths, a new one added) */
static int put_op(Ctx *x, Columns *c, long kind, PyObject *path) {
    PyObject *code = PyDict_GetItemWithError(x->path_codes, path);
    uint64_t value;
    if (code != NULL) {
        value = PyLong_AsUnsignedLongLong(code);
        if (value == (uint64_t)-1 && PyErr_Occurred()) return FAIL;
    } else {
        if (PyErr_Occurred()) return FAIL;
        value = (uint64_t)PyList_GET_SIZE(x->paths);
        PyObject *fresh = PyLong_FromUnsignedLongLong(value);
        if (fresh == NULL) return FAIL;
        int r = PyDict_SetItem(x->path_codes, path, fresh);
        Py_DECREF(fresh);
        if (r < 0 || PyList_Append(x->paths, path) < 0) return FAIL;
    }
    value = value << 2 | (uint64_t)kind;
    if (buf_put(&c->op_codes, &value, 8)) return FAIL;
    c->n_op_codes++;
    return OK;
}

/* the row just appended has its operations settled (put_op'd): its entry in the op columns */
static int end_ops(Columns *c) {
    int64_t row = c->pending - 1;
    return buf_put(&c->op_rows, &row, 8) || buf_put(&c->op_ends, &c->n_op_codes, 8) ? FAIL : OK;
}

/* file_ops.message_file_ops of the parsed message of the row just appended, into the op columns
   (nothing for a tool result's nested calls: not settled); FAIL on an exception */
static int dict_ops(Ctx *x, Columns *c, PyObject *msg, PyObject *role) {
    if (str_is(role, "toolResult")) {
        int has = PyDict_Contains(msg, s_nestedCalls);
        if (has != 0) return has < 0 ? FAIL : OK;
    }
    PyObject *content = str_is(role, "assistant") ? PyDict_GetItemWithError(msg, s_content) : NULL;
    if (content == NULL && PyErr_Occurred()) return FAIL;
    if (content != NULL && PyList_CheckExact(content)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content); i++) {
            PyObject *block = PyList_GET_ITEM(content, i);
            if (!PyDict_CheckExact(block)) continue;
            PyObject *t = PyDict_GetItemWithError(block, s_type);
            PyObject *name = t == NULL ? NULL : PyDict_GetItemWithError(block, s_name);
            PyObject *args = name == NULL ? NULL : PyDict_GetItemWithError(block, s_arguments);
            if (PyErr_Occurred()) return FAIL;
            /* a toolCall with a name and arguments (an object: any other has no path) */
            if (args == NULL || !str_is(t, "toolCall") || !PyDict_CheckExact(args)) continue;
            long kind = str_is(name, "read") ? 0 : str_is(name, "write") ? 1 : str_is(name, "edit") ? 2 : -1;
            PyObject *path = kind < 0 ? NULL : PyDict_GetItemWithError(args, s_path);
            if (PyErr_Occurred()) return FAIL;
            if (path != NULL && PyUnicode_CheckExact(path) && PyUnicode_GET_LENGTH(path) > 0 &&
                put_op(x, c, kind, path) != OK)
                return FAIL;
        }
    }
    return end_ops(c);
}

/* file_ops.may_hold_file_op(msg): a toolCall block named read, write or edit, or nestedCalls */
static int dict_file_op(PyObject *msg, int *out) {
    *out = 0;
    int has = PyDict_Contains(msg, s_nestedCalls);
    if (has != 0) {
        *out = has > 0;
        return has < 0 ? FAIL : OK;
    }
    PyObject *content = PyDict_GetItemWithError(msg, s_content);
    if (content == NULL) return PyErr_Occurred() ? FAIL : OK;
    if (!PyList_CheckExact(content)) return OK;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content); i++) {
        PyObject *block = PyList_GET_ITEM(content, i);
        if (!PyDict_CheckExact(block)) continue;
        PyObject *t = PyDict_GetItemWithError(block, s_type);
        if (t == NULL) {
            if (PyErr_Occurred()) return FAIL;
            continue;
        }
        if (!str_is(t, "toolCall")) continue;
        PyObject *name = PyDict_GetItemWithError(block, s_name);
        if (name == NULL) {
            if (PyErr_Occurred()) return FAIL;
            continue;
        }
        if (str_is(name, "read") || str_is(name, "write") || str_is(name, "edit")) {
            *out = 1;
            return OK;
        }
    }
    return OK;
}

/* one parsed value at (line, offset, length): OK when appended, BAIL for the Python path, FAIL on
   an exception */
static int index_dict(Ctx *x, Columns *c, PyObject *v, int64_t line, int64_t offset, int64_t length) {
    int64_t id, parent, tokens = 0, usage = 0;
    uint32_t type_code, role_code = 0;
    int has_usage = 0, file_op = 0;
    PyObject *message_role = NULL, *message = NULL; /* borrowed */
    if (!PyDict_CheckExact(v)) return BAIL;
    PyObject *typ = PyDict_GetItemWithError(v, s_type);
    if (typ == NULL || !PyUnicode_CheckExact(typ) || str_is(typ, "session") || str_is(typ, "label"))
        goto check;
    PyObject *rid = PyDict_GetItemWithError(v, s_id);
    if (rid == NULL || !hex8(rid, &id)) goto check;
    PyObject *par = PyDict_GetItemWithError(v, s_parentId);
    if (par == NULL) goto check;
    if (par == Py_None)
        parent = x->id_null;
    else if (!hex8(par, &parent))
        return BAIL;
    PyObject *stamp = PyDict_GetItemWithError(v, s_timestamp);
    int64_t stamp_packed;
    if (stamp == NULL || !pack_stamp(stamp, &stamp_packed)) goto check;
    if (str_is(typ, "message")) {
        PyObject *msg = PyDict_GetItemWithError(v, s_message);
        if (msg == NULL || !PyDict_CheckExact(msg)) goto check;
        PyObject *role = PyDict_GetItemWithError(msg, s_role);
        if (role == NULL || !PyUnicode_CheckExact(role)) goto check;
        int r = estimate(msg, role, &tokens);
        if (r != OK) return r;
        if (str_is(role, "assistant")) {
            r = usage_tokens(msg, &has_usage, &usage);
            if (r != OK) return r;
        }
        if ((r = dict_file_op(msg, &file_op)) != OK) return r;
        message_role = role;
        message = msg;
    }
    /* the type's code before the role's, as the Python loop asks for them (codes are handed out
       in the order first asked) */
    if (code_of(x->codes, x->symbol, typ, &type_code) < 0) return FAIL;
    if (message_role != NULL && code_of(x->codes, x->symbol, message_role, &role_code) < 0) return FAIL;
    int appended = append_row(x, c, line, offset, length, type_code, role_code, id, parent, tokens, has_usage,
                              usage, stamp_packed, file_op);
    if (appended != OK || !file_op) return appended;
    return dict_ops(x, c, message, message_role);
check: /* a failed lookup may have set an exception (an unhashable key cannot occur, but be safe) */
    return PyErr_Occurred() ? FAIL : BAIL;
}

/* ---------------------------------------------------------------------------------------------
 * The line scanner: the facts index_dict takes from a parsed value, read straight from the
 * line's bytes, without building the value (orjson's Python objects were ~2/3 of a cold index).
 * It reads a subset of JSON exactly -- strict UTF-8, no escaped surrogates, integers of at most
 * 15 digits where a number's value or printed length matters, nesting to SCAN_DEPTH -- and gives
 * up (BAIL) on anything else, and on every case index_dict or the estimate leave to Python: the
 * line then goes the parsed way (index_line), which decides it exactly as before. A key that
 * matters read twice, or written with an escape, gives up too (JSON.parse keeps the last).
 * ------------------------------------------------------------------------------------------- */
#define SCAN_DEPTH 64
#define SCAN_KEYS 32 /* the most keys of one object inside tool arguments (duplicates are looked for) */

typedef struct {
    const unsigned char *p, *end;
} Scan;

typedef struct {
    const unsigned char *raw; /* the bytes between the quotes */
    Py_ssize_t len;
    int64_t units; /* UTF-16 length of the string */
    int64_t json;  /* length of JSON.stringify(string) */
    int escaped;
} Str;

static void skip_ws(Scan *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

static int64_t json_char_len(uint32_t c) {
    if (c < 0x20) return (c == 8 || c == 9 || c == 10 || c == 12 || c == 13) ? 2 : 6;
    if (c == '"' || c == '\\') return 2;
    return c > 0xFFFF ? 2 : 1;
}

static int hex_digit(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* 8 bytes that are all printable ASCII other than '"' and '\\' (each one UTF-16 unit, printed as
   itself by JSON.stringify): most of a session's text, checked 8 at a time */
static inline int plain8(uint64_t v) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    if (v & highs) return 0;
    uint64_t control = (v - ones * 0x20) & ~v & highs;
    uint64_t quote = v ^ (ones * 0x22), backslash = v ^ (ones * 0x5C);
    return !(control | ((quote - ones) & ~quote & highs) | ((backslash - ones) & ~backslash & highs));
}

/* a string at s->p (its opening quote); 0, or -1 to give up */
static int scan_string(Scan *s, Str *out) {
    const unsigned char *p = s->p + 1, *end = s->end;
    int64_t units = 0, json = 2;
    int escaped = 0;
    out->raw = p;
    for (;;) {
        const unsigned char *run = p;
        while (end - p >= 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            if (!plain8(v)) break;
            p += 8;
        }
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        units += p - run;
        json += p - run;
        if (p >= end) return -1;
        unsigned char c = *p;
        if (c == '"') break;
        if (c < 0x20) return -1; /* not JSON */
        if (c == '\\') {
            if (end - p < 2) return -1;
            uint32_t cp;
            escaped = 1;
            switch (p[1]) {
            case '"': cp = '"'; p += 2; break;
            case '\\': cp = '\\'; p += 2; break;
            case '/': cp = '/'; p += 2; break;
            case 'b': cp = 8; p += 2; break;
            case 'f': cp = 12; p += 2; break;
            case 'n': cp = 10; p += 2; break;
            case 'r': cp = 13; p += 2; break;
            case 't': cp = 9; p += 2; break;
            case 'u': {
                if (end - p < 6) return -1;
                int a = hex_digit(p[2]), b = hex_digit(p[3]), c2 = hex_digit(p[4]), d = hex_digit(p[5]);
                if (a < 0 || b < 0 || c2 < 0 || d < 0) return -1;
                cp = (uint32_t)(a << 12 | b << 8 | c2 << 4 | d);
                if (cp >= 0xD800 && cp <= 0xDFFF) return -1; /* a surrogate: pairs and lone ones left to Python */
                p += 6;
                break;
            }
            default:
                return -1;
            }
            units += 1;
            json += json_char_len(cp);
            continue;
        }
        /* strict UTF-8 (orjson's; invalid bytes are read by pi with replacement: Python decides) */
        int n;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            n = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F; /* no surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else
            return -1;
        if (end - p <= n) return -1;
        if (p[1] < lo || p[1] > hi) return -1;
        for (int k = 2; k <= n; k++)
            if (p[k] < 0x80 || p[k] > 0xBF) return -1;
        units += n == 3 ? 2 : 1; /* four bytes: an astral code point, a surrogate pair in UTF-16 */
        json += n == 3 ? 2 : 1;
        p += n + 1;
    }
    out->len = p - out->raw;
    out->units = units;
    out->json = json;
    out->escaped = escaped;
    s->p = p + 1;
    return 0;
}

/* a string equal to an ASCII literal, as written without escapes */
static int str_eq(const Str *x, const char *lit) {
    size_t n = strlen(lit);
    return !x->escaped && (size_t)x->len == n && memcmp(x->raw, lit, n) == 0;
}

typedef struct {
    int is_int;    /* an integer of at most 15 digits: `value` is exact */
    int64_t value; /* when is_int */
    Py_ssize_t len;
} Num;

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static int scan_number(Scan *s, Num *out) {
    const unsigned char *p = s->p, *end = s->end, *start = p;
    int negative = 0;
    if (p < end && *p == '-') {
        negative = 1;
        p++;
    }
    if (p >= end || !is_digit(*p)) return -1;
    const unsigned char *digits = p;
    if (*p == '0')
        p++;
    else
        while (p < end && is_digit(*p)) p++;
    Py_ssize_t n_digits = p - digits;
    int is_int = 1;
    if (p < end && *p == '.') {
        is_int = 0;
        p++;
        if (p >= end || !is_digit(*p)) return -1;
        while (p < end && is_digit(*p)) p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_int = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !is_digit(*p)) return -1;
        while (p < end && is_digit(*p)) p++;
    }
    out->is_int = is_int && n_digits <= 15;
    out->value = 0;
    if (out->is_int) {
        for (Py_ssize_t k = 0; k < n_digits; k++) out->value = out->value * 10 + (digits[k] - '0');
        if (negative) out->value = -out->value;
    }
    out->len = p - start;
    s->p = p;
    return 0;
}

static int scan_literal(Scan *s, const char *lit, int64_t *json) {
    size_t n = strlen(lit);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n) != 0) return -1;
    s->p += n;
    if (json != NULL) *json += (int64_t)n;
    return 0;
}

/* a string member: its facts, else `kind` says what it was (0 absent, 1 string, 2 other) */
typedef struct {
    int kind;
    Str str;
} Field;

static int scan_value(Scan *s, int depth, int64_t *json);

/* a member's key and its colon: 0, or -1 to give up */
static int scan_key(Scan *s, Str *key) {
    skip_ws(s);
    if (s->p >= s->end || *s->p != '"' || scan_string(s, key) < 0) return -1;
    skip_ws(s);
    if (s->p >= s->end || *s->p != ':') return -1;
    s->p++;
    skip_ws(s);
    return 0;
}

/* after an item of an object or array: 1 at a comma (another item follows), 0 at `close` (read
   past it), -1 for anything else */
static int next_item(Scan *s, unsigned char close) {
    skip_ws(s);
    if (s->p >= s->end) return -1;
    if (*s->p == ',') {
        s->p++;
        return 1;
    }
    if (*s->p != close) return -1;
    s->p++;
    return 0;
}

/* an empty object or array (s->p just after its opener): 1 when it is one (read past it) */
static int empty_container(Scan *s, unsigned char close) {
    skip_ws(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        return 1;
    }
    return 0;
}


/* an object or array at s->p, read and checked; `json`: add len(JSON.stringify(it)) (numbers other
   than short integers, and objects with a key twice or escaped, give up then) */
/* an object; `path` (when not NULL, with `json`): its "path" member, as scan_field reads it */
static int scan_object_path(Scan *s, int depth, int64_t *json, Field *path) {
    if (depth > SCAN_DEPTH) return -1;
    s->p++; /* { */
    if (json != NULL) *json += 2;
    if (empty_container(s, '}')) return 0;
    Str keys[SCAN_KEYS];
    int n = 0, more;
    do {
        Str key;
        if (scan_key(s, &key) < 0) return -1;
        if (json != NULL) {
            if (key.escaped || n == SCAN_KEYS) return -1;
            for (int k = 0; k < n; k++)
                if (keys[k].len == key.len && memcmp(keys[k].raw, key.raw, (size_t)key.len) == 0) return -1;
            keys[n++] = key;
            *json += key.json + 1; /* the key and its colon */
        }
        if (path != NULL && json != NULL && str_eq(&key, "path")) { /* (once: a second one gave up above) */
            skip_ws(s);
            if (s->p < s->end && *s->p == '"') {
                path->kind = 1;
                if (scan_string(s, &path->str) < 0) return -1;
                *json += path->str.json;
            } else {
                path->kind = 2;
                if (scan_value(s, depth + 1, json) < 0) return -1;
            }
        } else if (scan_value(s, depth + 1, json) < 0)
            return -1;
        if ((more = next_item(s, '}')) < 0) return -1;
        if (more && json != NULL) *json += 1; /* the comma */
    } while (more);
    return 0;
}

static int scan_object(Scan *s, int depth, int64_t *json) { return scan_object_path(s, depth, json, NULL); }

static int scan_array(Scan *s, int depth, int64_t *json) {
    if (depth > SCAN_DEPTH) return -1;
    s->p++; /* [ */
    if (json != NULL) *json += 2;
    if (empty_container(s, ']')) return 0;
    int more;
    do {
        if (scan_value(s, depth + 1, json) < 0 || (more = next_item(s, ']')) < 0) return -1;
        if (more && json != NULL) *json += 1; /* the comma */
    } while (more);
    return 0;
}

static int scan_value(Scan *s, int depth, int64_t *json) {
    skip_ws(s);
    if (s->p >= s->end) return -1;
    switch (*s->p) {
    case '{':
        return scan_object(s, depth, json);
    case '[':
        return scan_array(s, depth, json);
    case '"': {
        Str x;
        if (scan_string(s, &x) < 0) return -1;
        if (json != NULL) *json += x.json;
        return 0;
    }
    case 't':
        return scan_literal(s, "true", json);
    case 'f':
        return scan_literal(s, "false", json);
    case 'n':
        return scan_literal(s, "null", json);
    default: {
        Num x;
        if (scan_number(s, &x) < 0) return -1;
        if (json != NULL) {
            if (!x.is_int) return -1; /* a fraction, an exponent or a long integer: JS's digits in Python */
            *json += x.value == 0 ? 1 : x.len; /* -0 prints as 0 */
        }
        return 0;
    }
    }
}

/* the keys of one object whose values are looked at (by index), read in turn by `member` */
typedef int (*member_fn)(Scan *s, int key, void *facts);

/* an object at s->p whose keys among names[] go to member() (once each: a second one, or any
   escaped key, gives up); the others are read and checked */
static int scan_members(Scan *s, const char *const *names, int n_names, member_fn member, void *facts) {
    if (s->p >= s->end || *s->p != '{') return -1;
    s->p++;
    if (empty_container(s, '}')) return 0;
    unsigned seen = 0;
    int more;
    do {
        Str key;
        if (scan_key(s, &key) < 0 || key.escaped) return -1;
        int which = -1;
        for (int k = 0; k < n_names; k++)
            if (str_eq(&key, names[k])) {
                which = k;
                break;
            }
        if (which < 0) {
            if (scan_value(s, 2, NULL) < 0) return -1;
        } else {
            if (seen & (1u << which)) return -1;
            seen |= 1u << which;
            if (member(s, which, facts) < 0) return -1;
        }
        if ((more = next_item(s, '}')) < 0) return -1;
    } while (more);
    return 0;
}

static int scan_field(Scan *s, Field *f) {
    if (s->p < s->end && *s->p == '"') {
        f->kind = 1;
        return scan_string(s, &f->str);
    }
    f->kind = 2;
    return scan_value(s, 3, NULL);
}

/* a file operation of a message (file_ops.message_file_ops): kind 0 read, 1 write, 2 edit */
#define MAX_FILE_OPS 8 /* more in one message: Python reads it */
typedef struct {
    const unsigned char *raw; /* the path's bytes between the quotes */
    Py_ssize_t len;
    int kind, escaped;
} FileOp;

/* a content block: what estimate() reads of it */
enum { B_TYPE, B_TEXT, B_THINKING, B_NAME, B_ARGUMENTS };
static const char *const BLOCK_KEYS[] = {"type", "text", "thinking", "name", "arguments"};
typedef struct {
    Field type, text, thinking, name;
    int args_kind; /* 0 absent, 1 object (args_json is its JSON.stringify length), 2 other */
    int64_t args_json;
    Field args_path; /* the object's "path" member, when args_kind is 1 */
} Block;

static int block_member(Scan *s, int key, void *facts) {
    Block *b = facts;
    switch (key) {
    case B_TYPE: return scan_field(s, &b->type);
    case B_TEXT: return scan_field(s, &b->text);
    case B_THINKING: return scan_field(s, &b->thinking);
    case B_NAME: return scan_field(s, &b->name);
    default:
        if (s->p < s->end && *s->p == '{') {
            b->args_kind = 1;
            b->args_json = 0;
            return scan_object_path(s, 4, &b->args_json, &b->args_path);
        }
        b->args_kind = 2;
        return scan_value(s, 4, NULL);
    }
}

/* a message's content, summed for both ways estimate() reads it: as an assistant's and as a
   user's (toolResult, custom) content; a way that would give up is marked */
typedef struct {
    int kind; /* 0 absent, 1 string, 2 array, 3 other */
    int64_t str_units;
    int64_t assistant_chars, user_chars;
    int assistant_bail, user_bail;
    int file_op; /* a toolCall block named read, write or edit */
    /* file_ops.message_file_ops of an assistant's content: (kind, path) in call order; `ops_unknown`:
       too many, or arguments the scanner cannot read (the index leaves the message to Python) */
    int n_ops, ops_unknown;
    FileOp *ops; /* room for MAX_FILE_OPS (the row's: not cleared for every line) */
} Content;

/* FileOps._add_op of a file tool's call (kind: its index in FILE_OP_TOOLS) with these arguments:
   its "path" when that is a non-empty string (arguments that are no object have none) */
static void scan_file_op(Content *c, int kind, const Block *b) {
    if (b->args_kind != 1 || b->args_path.kind != 1 || b->args_path.str.len == 0) return;
    if (c->ops == NULL || c->n_ops == MAX_FILE_OPS) {
        c->ops_unknown = 1;
        return;
    }
    FileOp *op = &c->ops[c->n_ops++];
    op->raw = b->args_path.str.raw;
    op->len = b->args_path.str.len;
    op->kind = kind;
    op->escaped = b->args_path.str.escaped;
}

static int scan_content(Scan *s, Content *c) {
    if (s->p < s->end && *s->p == '"') {
        Str x;
        c->kind = 1;
        if (scan_string(s, &x) < 0) return -1;
        c->str_units = x.units;
        return 0;
    }
    if (s->p >= s->end || *s->p != '[') {
        c->kind = 3;
        return scan_value(s, 3, NULL);
    }
    c->kind = 2;
    s->p++;
    if (empty_container(s, ']')) return 0;
    int more;
    do {
        skip_ws(s);
        if (s->p < s->end && *s->p == '{') {
            Block b;
            memset(&b, 0, sizeof b);
            if (scan_members(s, BLOCK_KEYS, 5, block_member, &b) < 0) return -1;
            if (b.type.kind == 0) { /* no type: estimate() gives up either way */
                c->assistant_bail = c->user_bail = 1;
            } else if (b.type.kind == 1) { /* a type other than a string counts nothing */
                const Str *t = &b.type.str;
                if (t->escaped) return -1;
                if (str_eq(t, "text")) {
                    if (b.text.kind != 1) c->assistant_bail = c->user_bail = 1;
                    c->assistant_chars += b.text.str.units;
                    c->user_chars += b.text.str.units;
                } else if (str_eq(t, "thinking")) {
                    if (b.thinking.kind != 1) c->assistant_bail = 1;
                    c->assistant_chars += b.thinking.str.units;
                } else if (str_eq(t, "toolCall")) {
                    if (b.name.kind != 1 || b.args_kind != 1) c->assistant_bail = 1;
                    c->assistant_chars += b.name.str.units + b.args_json;
                    const Str *name = &b.name.str;
                    if (b.name.kind == 1 && name->escaped) return -1; /* it may spell a file tool's */
                    int kind = str_eq(name, "read") ? 0 : str_eq(name, "write") ? 1 : str_eq(name, "edit") ? 2 : -1;
                    if (kind >= 0) {
                        c->file_op = 1;
                        scan_file_op(c, kind, &b);
                    }
                } else if (str_eq(t, "image")) {
                    c->user_chars += IMAGE_CHARS;
                }
            }
        } else { /* not an object: estimate() gives up either way */
            c->assistant_bail = c->user_bail = 1;
            if (scan_value(s, 3, NULL) < 0) return -1;
        }
        if ((more = next_item(s, ']')) < 0) return -1;
    } while (more);
    return 0;
}

/* an assistant's usage: what usage_tokens() reads of it */
enum { U_TOTAL, U_INPUT, U_OUTPUT, U_CACHE_READ, U_CACHE_WRITE };
static const char *const USAGE_KEYS[] = {"totalTokens", "input", "output", "cacheRead", "cacheWrite"};
typedef struct {
    int kind[5]; /* 0 absent, 1 a short integer, 2 null, 3 other */
    int64_t value[5];
} Usage;

static int usage_member(Scan *s, int key, void *facts) {
    Usage *u = facts;
    if (s->p < s->end && (*s->p == '-' || is_digit(*s->p))) {
        Num x;
        if (scan_number(s, &x) < 0) return -1;
        u->kind[key] = x.is_int ? 1 : 3;
        u->value[key] = x.value;
        return 0;
    }
    if (s->p < s->end && *s->p == 'n') {
        u->kind[key] = 2;
        return scan_literal(s, "null", NULL);
    }
    u->kind[key] = 3;
    return scan_value(s, 3, NULL);
}

/* a message: what estimate() and usage_tokens() read of it */
enum { M_ROLE, M_CONTENT, M_USAGE, M_STOP, M_COMMAND, M_OUTPUT, M_SUMMARY, M_NESTED };
static const char *const MESSAGE_KEYS[] = {"role",    "content", "usage",   "stopReason",
                                           "command", "output",  "summary", "nestedCalls"};
typedef struct {
    Field role, stop, command, output, summary;
    Content content;
    int usage_kind; /* 0 absent, 1 object, 2 other */
    Usage usage;
    int nested; /* has nestedCalls (pi 1.6.0's tool results: may hold file operations) */
} Message;

static int message_member(Scan *s, int key, void *facts) {
    Message *m = facts;
    switch (key) {
    case M_ROLE: return scan_field(s, &m->role);
    case M_CONTENT: return scan_content(s, &m->content);
    case M_USAGE:
        if (s->p < s->end && *s->p == '{') {
            m->usage_kind = 1;
            return scan_members(s, USAGE_KEYS, 5, usage_member, &m->usage);
        }
        m->usage_kind = 2;
        return scan_value(s, 2, NULL);
    case M_STOP: return scan_field(s, &m->stop);
    case M_COMMAND: return scan_field(s, &m->command);
    case M_OUTPUT: return scan_field(s, &m->output);
    case M_NESTED: m->nested = 1; return scan_value(s, 2, NULL);
    default: return scan_field(s, &m->summary);
    }
}

/* an entry: the fields index_dict reads */
enum { E_TYPE, E_ID, E_PARENT, E_STAMP, E_MESSAGE };
static const char *const ENTRY_KEYS[] = {"type", "id", "parentId", "timestamp", "message"};
typedef struct {
    Field type, id, stamp;
    int parent_kind; /* 0 absent, 1 string (parent), 2 null, 3 other */
    Str parent;
    int message_kind; /* 0 absent, 1 object, 2 other */
    Message message;
} Entry;

static int entry_member(Scan *s, int key, void *facts) {
    Entry *e = facts;
    switch (key) {
    case E_TYPE: return scan_field(s, &e->type);
    case E_ID: return scan_field(s, &e->id);
    case E_STAMP: return scan_field(s, &e->stamp);
    case E_PARENT:
        if (s->p < s->end && *s->p == '"') {
            e->parent_kind = 1;
            return scan_string(s, &e->parent);
        }
        if (s->p < s->end && *s->p == 'n') {
            e->parent_kind = 2;
            return scan_literal(s, "null", NULL);
        }
        e->parent_kind = 3;
        return scan_value(s, 2, NULL);
    default:
        if (s->p < s->end && *s->p == '{') {
            e->message_kind = 1;
            return scan_members(s, MESSAGE_KEYS, 8, message_member, &e->message);
        }
        e->message_kind = 2;
        return scan_value(s, 2, NULL);
    }
}

/* estimate() over a scanned message: OK with *tokens, or BAIL */
static int scanned_estimate(const Message *m, int64_t *tokens) {
    const Str *role = &m->role.str;
    const Content *c = &m->content;
    int64_t chars = 0;
    if (str_eq(role, "assistant")) {
        if (c->kind != 2 || c->assistant_bail) return BAIL;
        chars = c->assistant_chars;
    } else if (str_eq(role, "user") || str_eq(role, "toolResult") || str_eq(role, "custom")) {
        if (c->kind == 1)
            chars = c->str_units;
        else if (c->kind == 2 && !c->user_bail)
            chars = c->user_chars;
        else
            return BAIL;
    } else if (str_eq(role, "bashExecution")) {
        if (m->command.kind != 1 || m->output.kind != 1) return BAIL;
        chars = m->command.str.units + m->output.str.units;
    } else if (str_eq(role, "branchSummary") || str_eq(role, "compactionSummary")) {
        if (m->summary.kind != 1) return BAIL;
        chars = m->summary.str.units;
    }
    *tokens = (chars + 3) / 4;
    return OK;
}

/* usage_tokens() over a scanned assistant message */
static int scanned_usage(const Message *m, int *has, int64_t *total_out) {
    *has = 0;
    if (m->usage_kind == 0) return OK;
    if (m->stop.kind == 1 && (m->stop.str.escaped)) return BAIL;
    if (m->stop.kind == 1 && (str_eq(&m->stop.str, "aborted") || str_eq(&m->stop.str, "error"))) return OK;
    if (m->usage_kind != 1) return BAIL;
    const Usage *u = &m->usage;
    int64_t x;
    int zero = u->kind[U_TOTAL] == 1 && u->value[U_TOTAL] == 0;
    if (u->kind[U_TOTAL] == 0 || u->kind[U_TOTAL] == 2 || zero) {
        x = 0;
        for (int k = U_INPUT; k <= U_CACHE_WRITE; k++) {
            if (u->kind[k] != 1) return BAIL;
            x += u->value[k];
        }
        if (x <= 0) return OK;
    } else if (u->kind[U_TOTAL] != 1) {
        return BAIL;
    } else {
        x = u->value[U_TOTAL];
        if (x <= 0) return BAIL;
    }
    if (x > EXACT_LIMIT) return BAIL;
    *has = 1;
    *total_out = x;
    return OK;
}

/* a scanned line's row: what index_dict appends (role NULL for an entry that is not a message) */
typedef struct {
    Str type, role;
    int is_message, null_parent, has_usage, file_op;
    int64_t id, parent, stamp, tokens, usage;
    /* a file_op row's message_file_ops: none for any role but an assistant's; unknown for a tool
       result's nested calls (the profiles read them differently) or content the scan left open */
    int n_ops, ops_unknown;
    FileOp ops[MAX_FILE_OPS]; /* last: scan_row clears what is before it */
} Row;

/* the row index_dict would make of the line in bytes[0:len]: OK, or BAIL (the parsed way decides) */
static int scan_row(const char *bytes, Py_ssize_t len, Row *row) {
    Scan s = {(const unsigned char *)bytes, (const unsigned char *)bytes + len};
    Entry e;
    memset(&e, 0, sizeof e);
    memset(row, 0, offsetof(Row, ops));
    e.message.content.ops = row->ops;
    skip_ws(&s);
    if (scan_members(&s, ENTRY_KEYS, 5, entry_member, &e) < 0) return BAIL;
    skip_ws(&s);
    if (s.p != s.end) return BAIL;
    const Str *typ = &e.type.str;
    if (e.type.kind != 1 || typ->escaped || str_eq(typ, "session") || str_eq(typ, "label")) return BAIL;
    row->type = *typ;
    if (e.id.kind != 1 || !hex8_bytes(e.id.str.raw, e.id.str.len, &row->id)) return BAIL;
    row->null_parent = e.parent_kind == 2;
    if (!row->null_parent && (e.parent_kind != 1 || !hex8_bytes(e.parent.raw, e.parent.len, &row->parent)))
        return BAIL;
    if (e.stamp.kind != 1 || !pack_stamp_bytes(e.stamp.str.raw, e.stamp.str.len, &row->stamp)) return BAIL;
    if (str_eq(typ, "message")) {
        const Message *m = &e.message;
        if (e.message_kind != 1 || m->role.kind != 1 || m->role.str.escaped) return BAIL;
        row->is_message = 1;
        row->role = m->role.str;
        row->file_op = m->content.file_op || m->nested;
        int assistant = str_eq(&row->role, "assistant");
        row->ops_unknown = (m->nested && str_eq(&row->role, "toolResult")) || (assistant && m->content.ops_unknown);
        row->n_ops = assistant ? m->content.n_ops : 0; /* (in row->ops already) */
        if (scanned_estimate(m, &row->tokens) != OK) return BAIL;
        if (str_eq(&row->role, "assistant") && scanned_usage(m, &row->has_usage, &row->usage) != OK) return BAIL;
    }
    return OK;
}

/* a symbol's code from its scanned (unescaped, valid UTF-8) bytes */
static int scanned_code(Ctx *x, const Str *name, uint32_t *out) {
    PyObject *text = PyUnicode_DecodeUTF8((const char *)name->raw, name->len, NULL);
    if (text == NULL) return -1;
    int r = code_of(x->codes, x->symbol, text, out);
    Py_DECREF(text);
    return r;
}

/* a scanned path: its bytes decoded (JSON.parse's string, through `loads` when it has escapes);
   NULL with no exception when `loads` refuses it */
static PyObject *scanned_path(Ctx *x, const FileOp *op) {
    if (!op->escaped) return PyUnicode_DecodeUTF8((const char *)op->raw, op->len, NULL);
    PyObject *quoted = PyBytes_FromStringAndSize((const char *)op->raw - 1, op->len + 2);
    if (quoted == NULL) return NULL;
    PyObject *path = PyObject_CallOneArg(x->loads, quoted);
    Py_DECREF(quoted);
    if (path == NULL && PyErr_ExceptionMatches(x->decode_error)) PyErr_Clear();
    else if (path != NULL && !PyUnicode_CheckExact(path)) Py_CLEAR(path);
    return path;
}

/* file_ops.message_file_ops of the scanned row just appended, into the op columns (nothing when
   not settled); FAIL on an exception */
static int scanned_ops(Ctx *x, Columns *c, const Row *row) {
    if (row->ops_unknown) return OK;
    PyObject *paths[MAX_FILE_OPS];
    for (int k = 0; k < row->n_ops; k++) {
        if ((paths[k] = scanned_path(x, &row->ops[k])) == NULL) {
            while (k--) Py_DECREF(paths[k]);
            return PyErr_Occurred() ? FAIL : OK; /* a path `loads` refuses: left to Python */
        }
    }
    int r = OK;
    for (int k = 0; k < row->n_ops; k++) {
        if (r == OK) r = put_op(x, c, row->ops[k].kind, paths[k]);
        Py_DECREF(paths[k]);
    }
    return r == OK ? end_ops(c) : r;
}

/* the line's row appended from its bytes: OK, BAIL (the parsed way decides), FAIL (an exception) */
static int index_scanned(Ctx *x, Columns *c, const char *bytes, Py_ssize_t len, int64_t line, int64_t offset) {
    Row row;
    if (scan_row(bytes, len, &row) != OK) return BAIL;
    /* the type's code before the role's, as index_dict asks for them */
    uint32_t type_code, role_code = 0;
    if (scanned_code(x, &row.type, &type_code) < 0) return FAIL;
    if (row.is_message && scanned_code(x, &row.role, &role_code) < 0) return FAIL;
    int appended = append_row(x, c, line, offset, len, type_code, role_code, row.id,
                              row.null_parent ? x->id_null : row.parent, row.tokens, row.has_usage, row.usage,
                              row.stamp, row.file_op);
    if (appended != OK || !row.file_op) return appended;
    return scanned_ops(x, c, &row);
}

/* reader.iter_values' line count of a run: the newlines in data[start:end] (memchr; bytes.count
   compares byte by byte, ~0.1 s of a 100 MB file's index) */
static PyObject *count_newlines(PyObject *self, PyObject *args) {
    Py_buffer b;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nn:count_newlines", &b, &start, &end)) return NULL;
    if (start < 0 || end > b.len || start > end) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "count_newlines: a range outside the bytes");
        return NULL;
    }
    const char *p = (const char *)b.buf + start, *stop = (const char *)b.buf + end;
    Py_ssize_t n = 0;
    while (p < stop && (p = memchr(p, '\n', (size_t)(stop - p))) != NULL) {
        n++;
        p++;
    }
    PyBuffer_Release(&b);
    return PyLong_FromSsize_t(n);
}

/* the scanner alone, for tests: (type, role or None, id, parentId code or None, packed timestamp,
   tokens, usage tokens or None) as index_scanned would append them, or None where it gives up */
static PyObject *scan_entry(PyObject *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    Row row;
    if (scan_row(b.buf, b.len, &row) != OK) {
        PyBuffer_Release(&b);
        Py_RETURN_NONE;
    }
    /* row's strings point into the buffer: decoded before it is released */
    PyObject *type = PyUnicode_DecodeUTF8((const char *)row.type.raw, row.type.len, NULL);
    PyObject *role = row.is_message ? PyUnicode_DecodeUTF8((const char *)row.role.raw, row.role.len, NULL)
                                    : Py_NewRef(Py_None);
    PyBuffer_Release(&b);
    PyObject *parent = row.null_parent ? Py_NewRef(Py_None) : PyLong_FromLongLong(row.parent);
    PyObject *usage = row.has_usage ? PyLong_FromLongLong(row.usage) : Py_NewRef(Py_None);
    if (type == NULL || role == NULL || parent == NULL || usage == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(role);
        Py_XDECREF(parent);
        Py_XDECREF(usage);
        return NULL;
    }
    return Py_BuildValue("(NNLNLLNN)", type, role, (long long)row.id, parent, (long long)row.stamp,
                         (long long)row.tokens, usage, PyBool_FromLong(row.file_op));
}

/* a row was appended: counted, the buffers flushed when full */
static int count_row(Columns *c, Py_ssize_t *appended) {
    (*appended)++;
    return c->pending >= FLUSH_EVERY && flush_columns(c) < 0 ? FAIL : OK;
}

/* fn(arg) in Python, after the rows so far are flushed (records stay in file order) */
static int to_python(Columns *c, PyObject *fn, PyObject *arg) {
    if (flush_columns(c) < 0) return FAIL;
    PyObject *res = PyObject_CallOneArg(fn, arg);
    if (res == NULL) return FAIL;
    Py_DECREF(res);
    return OK;
}

/* one RawValue: appended (OK), else handed to the fallback after a flush; FAIL on an exception */
static int index_raw(Ctx *x, Columns *c, PyObject *raw, Py_ssize_t *appended) {
    PyObject *v = PyObject_GetAttr(raw, s_value);
    if (v == NULL) return FAIL;
    int64_t line, offset, length;
    int r = BAIL;
    if (PyDict_CheckExact(v)) {
        if (get_i64(raw, s_line, &line) < 0 || get_i64(raw, s_offset, &offset) < 0 ||
            get_i64(raw, s_length, &length) < 0)
            r = FAIL;
        else
            r = index_dict(x, c, v, line, offset, length);
    }
    Py_DECREF(v);
    if (r == OK) return count_row(c, appended);
    return r == FAIL ? FAIL : to_python(c, x->fallback, raw);
}

/* one line of a run (without its newline), as reader.values_of_run reads it: an object on a line
   of its own (not ending with \r) is parsed here and appended when of the common shape, else
   given to the fallback as a RawValue; any other line goes to line_fallback(raw, line, offset,
   issues) (reader.value_of_line, then the fallback). */
static int index_line(Ctx *x, Columns *c, const char *buf, Py_ssize_t len, int64_t line, int64_t offset,
                      PyObject *issues, Py_ssize_t *appended) {
    PyObject *value = NULL;
    if (len > 0 && buf[len - 1] != '\r') {
        int scanned = index_scanned(x, c, buf, len, line, offset);
        if (scanned != BAIL) return scanned == OK ? count_row(c, appended) : FAIL;
        PyObject *view = PyMemoryView_FromMemory((char *)buf, len, PyBUF_READ);
        if (view == NULL) return FAIL;
        value = PyObject_CallOneArg(x->loads, view);
        Py_DECREF(view);
        if (value == NULL) {
            if (!PyErr_ExceptionMatches(x->decode_error)) return FAIL;
            PyErr_Clear();
        }
    }
    if (value != NULL && PyDict_CheckExact(value)) {
        int r = index_dict(x, c, value, line, offset, len);
        if (r != BAIL) {
            Py_DECREF(value);
            return r == OK ? count_row(c, appended) : FAIL;
        }
        PyObject *raw = PyObject_CallFunction(x->raw_type, "LLnO", (long long)line, (long long)offset, len, value);
        Py_DECREF(value);
        if (raw == NULL) return FAIL;
        r = to_python(c, x->fallback, raw);
        Py_DECREF(raw);
        return r;
    }
    Py_XDECREF(value);
    if (flush_columns(c) < 0) return FAIL;
    PyObject *res = PyObject_CallFunction(x->line_fallback, "y#LLO", buf, len, (long long)line, (long long)offset,
                                          issues);
    if (res == NULL) return FAIL;
    Py_DECREF(res);
    return OK;
}

/* a reader.LineRun: its lines in order */
static int index_run(Ctx *x, Columns *c, PyObject *run, Py_ssize_t *appended) {
    int64_t start, end, offset, line;
    if (get_i64(run, s_start, &start) < 0 || get_i64(run, s_end, &end) < 0 || get_i64(run, s_offset, &offset) < 0 ||
        get_i64(run, s_line, &line) < 0)
        return FAIL;
    PyObject *chunk = PyObject_GetAttr(run, s_chunk);
    if (chunk == NULL) return FAIL;
    PyObject *issues = PyObject_GetAttr(run, s_issues);
    if (issues == NULL) {
        Py_DECREF(chunk);
        return FAIL;
    }
    int r = OK;
    if (!PyBytes_CheckExact(chunk) || start < 0 || end < start || end > PyBytes_GET_SIZE(chunk) ||
        (end > start && PyBytes_AS_STRING(chunk)[end - 1] != '\n')) {
        PyErr_SetString(PyExc_ValueError, "index_common: a LineRun that is not whole lines of its bytes");
        r = FAIL;
    }
    const char *buf = PyBytes_AS_STRING(chunk);
    for (int64_t pos = start; r == OK && pos < end; line++) {
        const char *nl = memchr(buf + pos, '\n', (size_t)(end - pos)); /* found: the run ends with one */
        int64_t len = nl - (buf + pos);
        r = index_line(x, c, buf + pos, (Py_ssize_t)len, line, offset + (pos - start), issues, appended);
        pos += len + 1;
    }
    Py_DECREF(issues);
    Py_DECREF(chunk);
    return r;
}

static PyObject *index_common(PyObject *self, PyObject *args) {
    PyObject *values, *flush;
    int flags_tokens, flags_usage, flags_file_op;
    long long id_null;
    Ctx x;
    if (!PyArg_ParseTuple(args, "OOOOiiiLOOOOOO!O!:index_common", &values, &x.fallback, &flush, &x.symbol,
                          &flags_tokens, &flags_usage, &flags_file_op, &id_null, &x.run_type, &x.raw_type, &x.loads,
                          &x.decode_error, &x.line_fallback, &PyList_Type, &x.paths, &PyDict_Type, &x.path_codes))
        return NULL;
    if (!PyType_Check(x.run_type)) {
        PyErr_SetString(PyExc_TypeError, "index_common: run_type must be a type");
        return NULL;
    }
    x.flags_tokens = (uint8_t)flags_tokens;
    x.flags_usage = (uint8_t)flags_usage;
    x.flags_file_op = (uint8_t)flags_file_op;
    x.id_null = id_null;
    PyObject *it = PyObject_GetIter(values);
    if (it == NULL) return NULL;
    x.codes = PyDict_New();
    if (x.codes == NULL) {
        Py_DECREF(it);
        return NULL;
    }
    Columns c;
    memset(&c, 0, sizeof c);
    c.flush = flush;
    Py_ssize_t appended = 0;
    int ok = 1;
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        int r = Py_IS_TYPE(item, (PyTypeObject *)x.run_type) ? index_run(&x, &c, item, &appended)
                                                             : index_raw(&x, &c, item, &appended);
        Py_DECREF(item);
        if (r == FAIL) {
            ok = 0;
            break;
        }
    }
    if (ok && PyErr_Occurred()) ok = 0; /* the iterator raised */
    if (ok && flush_columns(&c) < 0) ok = 0;
    for (int i = 0; i < N_COLUMNS; i++) PyMem_Free(c.cols[i].data);
    PyMem_Free(c.op_rows.data);
    PyMem_Free(c.op_ends.data);
    PyMem_Free(c.op_codes.data);
    Py_DECREF(x.codes);
    Py_DECREF(it);
    if (!ok) return NULL;
    return PyLong_FromSsize_t(appended);
}

/* the estimate alone, for tests: the token count, or None where the Python path decides */
static PyObject *estimate_message(PyObject *self, PyObject *msg) {
    if (!PyDict_CheckExact(msg)) Py_RETURN_NONE;
    PyObject *role = PyDict_GetItemWithError(msg, s_role);
    if (role == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    if (!PyUnicode_CheckExact(role)) Py_RETURN_NONE;
    int64_t tokens = 0;
    int r = estimate(msg, role, &tokens);
    if (r == FAIL) return NULL;
    if (r == BAIL) Py_RETURN_NONE;
    return PyLong_FromLongLong(tokens);
}

/* byId's record for the 8-hex id `code`, the parent of record `cur` (*nxt = -1: none): `recent`'s
   record, else the previous line when it has the id and no id occurs twice in `sorted` (`unique`),
   else `sorted`'s record (as IdIndex.only_holder and by_code decide). -1 on an exception.
   `recent` is NULL when byId's dict is empty: then no Python object is touched. */
static int by_id_parent(const int64_t *ids, const uint64_t *sorted, Py_ssize_t n_sorted, PyObject *recent,
                        int unique, int64_t code, Py_ssize_t cur, Py_ssize_t *nxt) {
    *nxt = -1;
    if (recent != NULL) { /* ids indexed since the sort: byId's answer first */
        PyObject *key = PyLong_FromLongLong(code);
        if (key == NULL) return -1;
        PyObject *hit = PyDict_GetItemWithError(recent, key);
        Py_DECREF(key);
        if (hit != NULL) {
            *nxt = PyLong_AsSsize_t(hit);
            return (*nxt == -1 && PyErr_Occurred()) ? -1 : 0;
        }
        if (PyErr_Occurred()) return -1;
    }
    if (unique && cur > 0 && ids[cur - 1] == code) {
        *nxt = cur - 1; /* the previous line, and no other record has its id */
        return 0;
    }
    /* the last (id << 32 | index) <= (code << 32 | 0xFFFFFFFF) */
    uint64_t want = ((uint64_t)code << 32) | 0xFFFFFFFFu;
    Py_ssize_t lo = 0, hi = n_sorted;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] <= want)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && (sorted[lo - 1] >> 32) == (uint64_t)code) *nxt = (Py_ssize_t)(sorted[lo - 1] & 0xFFFFFFFFu);
    return 0;
}

/* Session.path_indices' walk up the parents over the id columns (getBranch), as far as it can go
   without Python: a parent that is an 8-hex id is `recent`'s record for it, else the previous
   line when that line has the id and no id occurs twice in `sorted` (`unique`), else `sorted`'s
   record (as IdIndex.only_holder and by_code decide). Stops with 0 at a root or a parent byId lacks, 1 at a parent
   that is not an 8-hex id (the caller does that step), 2 at a cycle (the parent is in `seen`). */
static PyObject *walk_parents(PyObject *self, PyObject *args) {
    PyObject *parents_obj, *ids_obj, *sorted_obj, *recent, *seen_obj, *out;
    int unique;
    Py_ssize_t cur;
    if (!PyArg_ParseTuple(args, "OOOO!pOnO!:walk_parents", &parents_obj, &ids_obj, &sorted_obj, &PyDict_Type,
                          &recent, &unique, &seen_obj, &cur, &PyList_Type, &out))
        return NULL;
    Py_buffer pb, ib, sb, seenb;
    if (PyObject_GetBuffer(parents_obj, &pb, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(ids_obj, &ib, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&pb);
        return NULL;
    }
    if (PyObject_GetBuffer(sorted_obj, &sb, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&pb);
        PyBuffer_Release(&ib);
        return NULL;
    }
    if (PyObject_GetBuffer(seen_obj, &seenb, PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&pb);
        PyBuffer_Release(&ib);
        PyBuffer_Release(&sb);
        return NULL;
    }
    const int64_t *parents = pb.buf, *ids = ib.buf;
    const uint64_t *sorted = sb.buf;
    char *seen = seenb.buf;
    Py_ssize_t n = pb.len / 8, n_sorted = sb.len / 8;
    int status = 0;
    if (ib.len / 8 < n || seenb.len < n || cur < 0 || cur >= n) {
        PyErr_SetString(PyExc_ValueError, "walk_parents: columns of different lengths");
        status = -1;
    }
    while (status == 0) {
        int64_t code = parents[cur];
        Py_ssize_t nxt = -1;
        if (code < 0) {
            if (code <= -3) status = 1; /* not an 8-hex id: byId by its key, in Python */
            break;                      /* -1/-2: undefined or null, the root */
        }
        if (by_id_parent(ids, sorted, n_sorted, PyDict_GET_SIZE(recent) > 0 ? recent : NULL, unique, code, cur,
                         &nxt) < 0) {
            status = -1;
            break;
        }
        if (nxt < 0) break; /* byId has no such id: the root */
        if (nxt >= n) {
            PyErr_SetString(PyExc_ValueError, "walk_parents: an index past the columns");
            status = -1;
            break;
        }
        if (seen[nxt]) {
            status = 2;
            break;
        }
        seen[nxt] = 1;
        PyObject *v = PyLong_FromSsize_t(nxt);
        if (v == NULL || PyList_Append(out, v) < 0) {
            Py_XDECREF(v);
            status = -1;
            break;
        }
        Py_DECREF(v);
        cur = nxt;
    }
    PyBuffer_Release(&pb);
    PyBuffer_Release(&ib);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&seenb);
    if (status < 0) return NULL;
    return Py_BuildValue("(ni)", cur, status);
}

/* outline._parents: each record's parent record as pi's getTree links it, into `out` (an array of
   C ints, -1 for a root); a record whose parentId is not an 8-hex id gets -2 (decided in Python).
   Records [start, stop) only: the caller goes in slices, so that the GIL is held a few ms at a time
   (the columns are the session's: held without the GIL they could not grow meanwhile). */
static PyObject *link_parents(PyObject *self, PyObject *args) {
    PyObject *parents_obj, *ids_obj, *sorted_obj, *recent, *out_obj;
    int unique;
    Py_ssize_t start, stop;
    if (!PyArg_ParseTuple(args, "OOOO!pOnn:link_parents", &parents_obj, &ids_obj, &sorted_obj, &PyDict_Type, &recent,
                          &unique, &out_obj, &start, &stop))
        return NULL;
    Py_buffer pb, ib, sb, ob;
    int got = 0, ok = 1;
    if (PyObject_GetBuffer(parents_obj, &pb, PyBUF_SIMPLE) == 0) got = 1;
    if (got == 1 && PyObject_GetBuffer(ids_obj, &ib, PyBUF_SIMPLE) == 0) got = 2;
    if (got == 2 && PyObject_GetBuffer(sorted_obj, &sb, PyBUF_SIMPLE) == 0) got = 3;
    if (got == 3 && PyObject_GetBuffer(out_obj, &ob, PyBUF_WRITABLE) == 0) got = 4;
    if (got == 4) {
        const int64_t *parents = pb.buf, *ids = ib.buf;
        const uint64_t *sorted = sb.buf;
        int *out = ob.buf;
        Py_ssize_t n = pb.len / 8;
        if (ib.len / 8 < n || ob.len / (Py_ssize_t)sizeof(int) < n) {
            PyErr_SetString(PyExc_ValueError, "link_parents: columns of different lengths");
            ok = 0;
        } else if (start < 0 || stop > n || start > stop) {
            PyErr_SetString(PyExc_ValueError, "link_parents: a range outside the columns");
            ok = 0;
        }
        PyObject *use_recent = PyDict_GET_SIZE(recent) > 0 ? recent : NULL;
        for (Py_ssize_t i = start; ok && i < stop; i++) {
            int64_t code = parents[i];
            Py_ssize_t p = -1;
            if (code < 0) {
                out[i] = code <= -3 ? -2 : -1; /* null/undefined: a root */
                continue;
            }
            if (code == ids[i]) { /* its own id: a root */
                out[i] = -1;
                continue;
            }
            if (by_id_parent(ids, sorted, sb.len / 8, use_recent, unique, code, i, &p) < 0) {
                ok = 0;
                break;
            }
            out[i] = (p >= 0 && p != i && p < n) ? (int)p : -1;
        }
    } else {
        ok = 0;
    }
    if (got >= 4) PyBuffer_Release(&ob);
    if (got >= 3) PyBuffer_Release(&sb);
    if (got >= 2) PyBuffer_Release(&ib);
    if (got >= 1) PyBuffer_Release(&pb);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

/* The buffers of objs[0..n) into b, read-only before index `writable_from`, writable from it on:
   how many it got (n, or fewer with a Python error set; release_buffers frees those it got). */
static int get_buffers(PyObject *const *objs, Py_buffer *b, int n, int writable_from) {
    int got = 0;
    for (; got < n; got++)
        if (PyObject_GetBuffer(objs[got], &b[got], got >= writable_from ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0) break;
    return got;
}

static void release_buffers(Py_buffer *b, int got) {
    for (int k = 0; k < got; k++) PyBuffer_Release(&b[k]);
}

/* outline.build_outline's walk of the tree: the shown records in pre-order (children in the order
   of `kids[first[p]:first[p+1]]`, roots in file order), each with its nearest shown ancestor (-1:
   the top). A record is shown if shows[i] and (match is None or match(i)). Writes `order` and
   `under` (int arrays of at least n items) and returns how many were shown. Without `match` the
   walk reads and writes only the buffers and runs without the GIL (~15-20 ms on 900k entries,
   while the window's GUI thread goes on); its memory is then PyMem_Raw's. */
static PyObject *tree_order(PyObject *self, PyObject *args) {
    PyObject *parent_obj, *first_obj, *kids_obj, *shows_obj, *match, *order_obj, *under_obj;
    if (!PyArg_ParseTuple(args, "OOOOOOO:tree_order", &parent_obj, &first_obj, &kids_obj, &shows_obj, &match,
                          &order_obj, &under_obj))
        return NULL;
    Py_buffer b[6];
    PyObject *objs[6] = {parent_obj, first_obj, kids_obj, shows_obj, order_obj, under_obj};
    int got = get_buffers(objs, b, 6, 4);
    Py_ssize_t shown = 0;
    int ok = got == 6;
    int *stack = NULL; /* pairs: a record to visit, its nearest shown ancestor */
    char *seen = NULL;
    enum { WALK_OK, WALK_NO_MEMORY, WALK_NO_ROOM, WALK_PYTHON_ERROR } failure = WALK_OK;
    if (ok) {
        const int *parent = b[0].buf, *first = b[1].buf, *kids = b[2].buf;
        const unsigned char *shows = b[3].buf;
        int *order = b[4].buf, *under = b[5].buf;
        Py_ssize_t n = b[0].len / (Py_ssize_t)sizeof(int);
        /* order and under may be shorter than n when the caller knows a bound (a search's hits) */
        Py_ssize_t room = b[4].len / (Py_ssize_t)sizeof(int);
        if (b[1].len / (Py_ssize_t)sizeof(int) < n + 1 || b[3].len < n || b[5].len / (Py_ssize_t)sizeof(int) < room) {
            PyErr_SetString(PyExc_ValueError, "tree_order: columns of different lengths");
            ok = 0;
        }
        PyThreadState *released = NULL;
        if (ok && match == Py_None) released = PyEval_SaveThread();
        /* the walk's stack grows as needed: it holds the roots and the siblings still to visit, far
           fewer than n on a session's tree (a bound of n + len(kids) ints was 7 MB at 900k entries).
           Each is pushed with its nearest shown ancestor (a column of them for every record was
           3.6 MB at 900k entries, at the window's memory peak while a search is built). */
        Py_ssize_t cap = 1024;
        if (ok) {
            seen = PyMem_RawCalloc((size_t)(n ? n : 1), 1);
            stack = PyMem_RawMalloc(2 * sizeof(int) * (size_t)cap);
            if (seen == NULL || stack == NULL) failure = WALK_NO_MEMORY;
        }
        Py_ssize_t top = 0;
#define PUSH(v, a)                                                                       \
    do {                                                                                 \
        if (top == cap) {                                                                \
            int *grown = PyMem_RawRealloc(stack, 2 * sizeof(int) * (size_t)(cap * 2));   \
            if (grown == NULL) {                                                         \
                failure = WALK_NO_MEMORY;                                                \
                break;                                                                   \
            }                                                                            \
            stack = grown;                                                               \
            cap *= 2;                                                                    \
        }                                                                                \
        stack[2 * top] = (v);                                                            \
        stack[2 * top + 1] = (a);                                                        \
        top++;                                                                           \
    } while (0)
        for (Py_ssize_t i = n - 1; ok && failure == WALK_OK && i >= 0; i--)
            if (parent[i] < 0) PUSH((int)i, -1); /* roots: popped in file order */
        while (ok && failure == WALK_OK && top > 0) {
            top--;
            int i = stack[2 * top];
            int anc = stack[2 * top + 1];
            if (seen[i]) continue;
            seen[i] = 1;
            int show = shows[i] != 0;
            if (show && match != Py_None) { /* with the GIL: released stays NULL */
                PyObject *r = PyObject_CallFunction(match, "i", i);
                if (r == NULL) {
                    failure = WALK_PYTHON_ERROR;
                    break;
                }
                show = PyObject_IsTrue(r);
                Py_DECREF(r);
                if (show < 0) {
                    failure = WALK_PYTHON_ERROR;
                    break;
                }
            }
            if (show) {
                if (shown == room) {
                    failure = WALK_NO_ROOM;
                    break;
                }
                order[shown] = i;
                under[shown] = anc;
                shown++;
                anc = i;
            }
            for (int k = first[i + 1] - 1; failure == WALK_OK && k >= first[i]; k--)
                PUSH(kids[k], anc); /* first child on top */
        }
#undef PUSH
        if (released != NULL) PyEval_RestoreThread(released);
        if (failure == WALK_NO_MEMORY) PyErr_NoMemory();
        if (failure == WALK_NO_ROOM)
            PyErr_SetString(PyExc_ValueError, "tree_order: more records shown than order has room for");
        if (failure != WALK_OK) ok = 0;
    }
    PyMem_RawFree(seen);
    PyMem_RawFree(stack);
    release_buffers(b, got);
    if (!ok) return NULL;
    return PyLong_FromSsize_t(shown);
}

/* outline._sort_siblings_by_time: the records with two children or more, from the children's
   `first` column (n + 1 ints), into `out` (at least n ints); returns how many */
static PyObject *branch_points(PyObject *self, PyObject *args) {
    PyObject *first_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OO:branch_points", &first_obj, &out_obj)) return NULL;
    Py_buffer b[2];
    PyObject *objs[2] = {first_obj, out_obj};
    int got = get_buffers(objs, b, 2, 1);
    Py_ssize_t count = 0;
    int ok = got == 2;
    if (ok) {
        const int *first = b[0].buf;
        int *out = b[1].buf;
        Py_ssize_t n = b[0].len / (Py_ssize_t)sizeof(int) - 1;
        if (n < 0 || b[1].len / (Py_ssize_t)sizeof(int) < n) {
            PyErr_SetString(PyExc_ValueError, "branch_points: columns of different lengths");
            ok = 0;
        }
        for (Py_ssize_t p = 0; ok && p < n; p++)
            if (first[p + 1] - first[p] >= 2) out[count++] = (int)p;
    }
    release_buffers(b, got);
    if (!ok) return NULL;
    return PyLong_FromSsize_t(count);
}

/* outline's counting sort: the items of bucket k are items[first[k]:first[k+1]], in the order of
   `keys`. Item j (value values[j], or j when values is None) goes to bucket keys[j] + shift; a
   negative bucket drops it. `first` (int, B + 1 items) and `items` (int, at least first[B]) are
   written; returns first[B]. */
static PyObject *bucket_items(PyObject *self, PyObject *args) {
    PyObject *keys_obj, *values_obj, *first_obj, *items_obj;
    int shift;
    if (!PyArg_ParseTuple(args, "OOiOO:bucket_items", &keys_obj, &values_obj, &shift, &first_obj, &items_obj))
        return NULL;
    /* keys and the values if any (read), then first and items (written) */
    int have_values = values_obj != Py_None;
    PyObject *objs[4];
    int n = 0;
    objs[n++] = keys_obj;
    if (have_values) objs[n++] = values_obj;
    objs[n++] = first_obj;
    objs[n++] = items_obj;
    Py_buffer b[4];
    int got = get_buffers(objs, b, n, n - 2);
    if (got < n) {
        release_buffers(b, got);
        return NULL;
    }
    const Py_buffer *kb = &b[0], *vb = have_values ? &b[1] : NULL, *fb = &b[n - 2], *ib = &b[n - 1];
    const int *keys = kb->buf;
    const int *values = vb != NULL ? vb->buf : NULL;
    int *first = fb->buf, *items = ib->buf;
    Py_ssize_t m = kb->len / (Py_ssize_t)sizeof(int);
    Py_ssize_t buckets = fb->len / (Py_ssize_t)sizeof(int) - 1;
    Py_ssize_t room = ib->len / (Py_ssize_t)sizeof(int);
    int ok = buckets >= 0 && (vb == NULL || vb->len / (Py_ssize_t)sizeof(int) >= m);
    Py_ssize_t total = 0;
    if (!ok) PyErr_SetString(PyExc_ValueError, "bucket_items: columns of different lengths");
    for (Py_ssize_t k = 0; ok && k <= buckets; k++) first[k] = 0;
    for (Py_ssize_t j = 0; ok && j < m; j++) {
        long k = (long)keys[j] + shift;
        if (k < 0) continue;
        if (k >= buckets) {
            PyErr_SetString(PyExc_ValueError, "bucket_items: a key past the last bucket");
            ok = 0;
            break;
        }
        first[k + 1]++;
    }
    for (Py_ssize_t k = 0; ok && k < buckets; k++) first[k + 1] += first[k];
    if (ok) {
        total = first[buckets];
        if (total > room) {
            PyErr_SetString(PyExc_ValueError, "bucket_items: items too short");
            ok = 0;
        }
    }
    if (ok) {
        /* each bucket filled from its end, the items taken last to first (so in `keys` order within
           a bucket): first[k + 1] moves down to where bucket k starts, no fill column (a copy of
           `first`, 3.6 MB on 900k entries, at the window's memory peak while a search is built) */
        for (Py_ssize_t j = m - 1; j >= 0; j--) {
            long k = (long)keys[j] + shift;
            if (k < 0) continue;
            items[--first[k + 1]] = values != NULL ? values[j] : (int)j;
        }
        /* first[k + 1] is bucket k's start now: shift them back into place */
        memmove(first, first + 1, sizeof(int) * (size_t)buckets);
        first[buckets] = (int)total;
    }
    release_buffers(b, got);
    if (!ok) return NULL;
    return PyLong_FromSsize_t(total);
}

/* outline.build_outline's rows: the chains of each group (the top, key -1, and every shown record
   with several shown children), the active path continuing at its level, side branches a group
   each. vfirst/vkids: the shown children of record r are vkids[vfirst[r+1]:vfirst[r+2]] (the top's
   at vfirst[0]:vfirst[1]). Writes each row's record to `rows` (the groups one after the other),
   its group and its row in the group to `group_col`/`row_col`, ORs head_bit/last_bit into `flags`
   (active_bit read there) and appends (key, start, end) of each group to `groups`, in the order
   of outline._chain_rows (the Python reference). Returns the number of rows. */
typedef struct {
    int key, lo, hi, skip;
} pending_group;

static PyObject *chain_rows(PyObject *self, PyObject *args) {
    PyObject *vfirst_obj, *vkids_obj, *flags_obj, *group_obj, *row_obj, *rows_obj, *groups;
    int active_bit, head_bit, last_bit;
    if (!PyArg_ParseTuple(args, "OOOiiiOOOO!:chain_rows", &vfirst_obj, &vkids_obj, &flags_obj, &active_bit,
                          &head_bit, &last_bit, &group_obj, &row_obj, &rows_obj, &PyList_Type, &groups))
        return NULL;
    Py_buffer b[6];
    PyObject *objs[6] = {vfirst_obj, vkids_obj, flags_obj, group_obj, row_obj, rows_obj};
    int got = get_buffers(objs, b, 6, 2);
    int ok = got == 6;
    Py_ssize_t nrows = 0;
    pending_group *stack = NULL;
    if (ok) {
        const int *vfirst = b[0].buf, *vkids = b[1].buf;
        unsigned char *flags = b[2].buf;
        int *group_col = b[3].buf, *row_col = b[4].buf, *rows = b[5].buf;
        Py_ssize_t n_first = b[0].len / (Py_ssize_t)sizeof(int);
        Py_ssize_t n_kids = b[1].len / (Py_ssize_t)sizeof(int);
        Py_ssize_t n = b[2].len; /* records */
        if (n_first < n + 2 || b[3].len / (Py_ssize_t)sizeof(int) < n || b[4].len / (Py_ssize_t)sizeof(int) < n ||
            b[5].len / (Py_ssize_t)sizeof(int) < n_kids || vfirst[n + 1] > n_kids) {
            PyErr_SetString(PyExc_ValueError, "chain_rows: columns of different lengths");
            ok = 0;
        }
        /* every shown record with children pushes one group, the top one more */
        if (ok && (stack = PyMem_Malloc(sizeof(pending_group) * (size_t)(n_kids + 1))) == NULL) {
            PyErr_NoMemory();
            ok = 0;
        }
        Py_ssize_t top = 0;
        if (ok && (vfirst[0] < 0 || vfirst[1] < vfirst[0] || vfirst[1] > n_kids)) {
            PyErr_SetString(PyExc_ValueError, "chain_rows: children out of the columns");
            ok = 0;
        }
        if (ok) stack[top++] = (pending_group){-1, vfirst[0], vfirst[1], -1};
        while (ok && top > 0) {
            pending_group g = stack[--top];
            Py_ssize_t start = nrows;
            int heads = g.hi - g.lo - (g.skip >= 0 ? 1 : 0);
            int multi = heads > 1 || g.key != -1;
            int h_no = 0;
            for (int k = g.lo; ok && k < g.hi; k++) {
                int cur = vkids[k];
                if (cur == g.skip) continue;
                int last = h_no == heads - 1 ? last_bit : 0;
                h_no++;
                int bits = last | (multi ? head_bit : 0);
                while (cur >= 0) {
                    if (cur >= n || nrows >= n_kids) {
                        PyErr_SetString(PyExc_ValueError, "chain_rows: a record past the columns");
                        ok = 0;
                        break;
                    }
                    group_col[cur] = g.key;
                    row_col[cur] = (int)(nrows - start);
                    rows[nrows++] = cur;
                    if (bits) flags[cur] |= (unsigned char)bits;
                    bits = last;
                    int lo = vfirst[cur + 1], hi = vfirst[cur + 2];
                    if (lo < 0 || hi < lo || hi > n_kids) {
                        PyErr_SetString(PyExc_ValueError, "chain_rows: children out of the columns");
                        ok = 0;
                        break;
                    }
                    if (hi - lo == 1) {
                        cur = vkids[lo];
                    } else if (hi > lo) {
                        if (top >= n_kids + 1) { /* more groups than shown records: not a tree */
                            PyErr_SetString(PyExc_ValueError, "chain_rows: columns not of one tree");
                            ok = 0;
                            break;
                        }
                        int act = -1;
                        for (int c = lo; c < hi; c++) {
                            int kid = vkids[c];
                            if (kid < 0 || kid >= n) continue; /* not a record: the loop above says so */
                            if (flags[kid] & active_bit) {
                                act = kid;
                                break;
                            }
                        }
                        stack[top++] = (pending_group){cur, lo, hi, act};
                        cur = act;
                    } else {
                        cur = -1;
                    }
                }
            }
            if (!ok) break;
            PyObject *item = Py_BuildValue("(inn)", g.key, start, nrows);
            if (item == NULL || PyList_Append(groups, item) < 0) ok = 0;
            Py_XDECREF(item);
        }
    }
    PyMem_Free(stack);
    release_buffers(b, got);
    if (!ok) return NULL;
    return PyLong_FromSsize_t(nrows);
}

/* record_table._sorted_ids and _no_repeats in one: writes (id << 32 | index) of each record whose
   id code is an 8-hex id (0 <= code < 2**32) into `out` (a "Q" array of at least n items), sorted
   (an LSD radix sort, a byte a pass, passes over bytes all keys share skipped), and returns
   (count, unique): unique is False if some id occurs twice. */
static PyObject *sort_ids(PyObject *self, PyObject *args) {
    PyObject *ids_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OO:sort_ids", &ids_obj, &out_obj)) return NULL;
    Py_buffer b[2];
    PyObject *objs[2] = {ids_obj, out_obj};
    int got = get_buffers(objs, b, 2, 1);
    if (got < 2) {
        release_buffers(b, got);
        return NULL;
    }
    const int64_t *ids = b[0].buf;
    uint64_t *out = b[1].buf;
    Py_ssize_t n = b[0].len / 8, count = 0;
    int unique = 1;
    uint64_t *tmp = NULL;
    if (b[1].len / 8 < n || b[0].itemsize != 8 || b[1].itemsize != 8) {
        PyErr_SetString(PyExc_ValueError, "sort_ids: an id column and an output of as many 8-byte items");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] <= 0xFFFFFFFFLL) out[count++] = ((uint64_t)ids[i] << 32) | (uint64_t)i;
    tmp = PyMem_Malloc(sizeof(uint64_t) * (size_t)(count ? count : 1));
    if (tmp == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    uint64_t *src = out, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        Py_ssize_t at[257] = {0};
        for (Py_ssize_t i = 0; i < count; i++) at[((src[i] >> shift) & 0xFF) + 1]++;
        int one_bucket = 0;
        for (int d = 1; d <= 256; d++)
            if (at[d] == count) one_bucket = 1;
        if (one_bucket) continue; /* every key has this byte: the order stays */
        for (int d = 1; d <= 256; d++) at[d] += at[d - 1];
        for (Py_ssize_t i = 0; i < count; i++) dst[at[(src[i] >> shift) & 0xFF]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != out) memcpy(out, src, sizeof(uint64_t) * (size_t)count);
    for (Py_ssize_t i = 1; i < count && unique; i++)
        if ((out[i] >> 32) == (out[i - 1] >> 32)) unique = 0;
    Py_END_ALLOW_THREADS
    PyMem_Free(tmp);
    release_buffers(b, 2);
    return Py_BuildValue("(nO)", count, unique ? Py_True : Py_False);
fail:
    PyMem_Free(tmp);
    release_buffers(b, 2);
    return NULL;
}

/* record_table's line shift of a scanned part: column[start:] += delta (an int64 column) */
static PyObject *add_to_tail(PyObject *self, PyObject *args) {
    PyObject *col_obj;
    Py_ssize_t start;
    long long delta;
    if (!PyArg_ParseTuple(args, "OnL:add_to_tail", &col_obj, &start, &delta)) return NULL;
    Py_buffer b;
    if (PyObject_GetBuffer(col_obj, &b, PyBUF_WRITABLE) < 0) return NULL;
    if (b.itemsize != 8 || start < 0) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "add_to_tail: an 8-byte column and a start >= 0");
        return NULL;
    }
    int64_t *col = b.buf;
    for (Py_ssize_t i = start; i < b.len / 8; i++) col[i] += delta;
    PyBuffer_Release(&b);
    Py_RETURN_NONE;
}

/* core.allocator.tune_allocator without ctypes (whose import is ~10 ms of every CLI run): glibc's
   mmap threshold and arena count; False where there is no glibc */
static PyObject *tune_malloc(PyObject *self, PyObject *args) {
    int threshold, arenas;
    if (!PyArg_ParseTuple(args, "ii:tune_malloc", &threshold, &arenas)) return NULL;
#ifdef __GLIBC__
    return PyBool_FromLong(mallopt(M_MMAP_THRESHOLD, threshold) == 1 && mallopt(M_ARENA_MAX, arenas) == 1);
#else
    Py_RETURN_FALSE;
#endif
}

/* core.allocator.tune_allocator's huge-page heap (see allocator.py for why and where): glibc grows
   its heap by at least `pad` bytes at a time (M_TOP_PAD) and keeps up to twice that free at its top
   (M_TRIM_THRESHOLD); the heap is grown once now, by a block of `probe` bytes (more than any free
   block, under the mmap threshold) freed at once, and the kernel is asked for transparent huge pages
   in the new part (madvise MADV_HUGEPAGE) before anything touches it. Returns the bytes advised: 0
   where the heap did not grow or the kernel has no THP (the pad and the trim threshold stay set). */
static PyObject *huge_page_heap(PyObject *self, PyObject *args) {
    Py_ssize_t pad, probe;
    if (!PyArg_ParseTuple(args, "nn:huge_page_heap", &pad, &probe)) return NULL;
    /* M_TRIM_THRESHOLD takes an int: twice the pad must fit */
    if (pad < ((Py_ssize_t)4 << 20) || pad > INT_MAX / 2 || probe <= 0) {
        PyErr_SetString(PyExc_ValueError, "huge_page_heap: pad from 4 MB to under 1 GB, probe above 0");
        return NULL;
    }
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (mallopt(M_TOP_PAD, (int)pad) != 1 || mallopt(M_TRIM_THRESHOLD, (int)(2 * pad)) != 1) return PyLong_FromLong(0);
    void *before = sbrk(0);
    void *volatile block = malloc((size_t)probe); /* volatile: the compiler would drop an unused pair */
    free(block);
    void *after = sbrk(0);
    if (before == (void *)-1 || after == (void *)-1 || (uintptr_t)after <= (uintptr_t)before) return PyLong_FromLong(0);
    uintptr_t start = ((uintptr_t)before + huge - 1) & ~(huge - 1);
    uintptr_t end = (uintptr_t)after & ~(huge - 1);
    if (end <= start || madvise((void *)start, end - start, MADV_HUGEPAGE) != 0) return PyLong_FromLong(0);
    return PyLong_FromSize_t((size_t)(end - start));
#else
    return PyLong_FromLong(0);
#endif
}

/* core.allocator.release_free_memory: glibc's malloc_trim(0), the free pages of every arena given back
   to the system (a big session's load leaves megabytes of them); False without glibc */
static PyObject *trim_malloc(PyObject *self, PyObject *noargs) {
#ifdef __GLIBC__
    int released;
    Py_BEGIN_ALLOW_THREADS
    released = malloc_trim(0);
    Py_END_ALLOW_THREADS
    return PyBool_FromLong(released);
#else
    Py_RETURN_FALSE;
#endif
}

static PyMethodDef methods[] = {
    {"tune_malloc", tune_malloc, METH_VARARGS,
     "tune_malloc(mmap_threshold, arena_max) -> bool: glibc's mallopt for both (False without glibc)."},
    {"huge_page_heap", huge_page_heap, METH_VARARGS,
     "huge_page_heap(pad, probe) -> int: a heap grown by pad bytes at a time and kept, its new part advised\n"
     "for transparent huge pages; the bytes advised (see the source)."},
    {"trim_malloc", trim_malloc, METH_NOARGS,
     "trim_malloc() -> bool: glibc's malloc_trim(0), whether memory was given back (False without glibc)."},
    {"sort_ids", sort_ids, METH_VARARGS,
     "sort_ids(ids, out) -> (count, unique): the 8-hex ids' (id << 32 | index), sorted, into out."},
    {"add_to_tail", add_to_tail, METH_VARARGS, "add_to_tail(column, start, delta) -> None: column[start:] += delta."},
    {"chain_rows", chain_rows, METH_VARARGS,
     "chain_rows(vfirst, vkids, flags, active, head, last, group_col, row_col, rows, groups) -> int."},
    {"bucket_items", bucket_items, METH_VARARGS,
     "bucket_items(keys, values, shift, first, items) -> int: a counting sort of items by key."},
    {"tree_order", tree_order, METH_VARARGS,
     "tree_order(parent, first, kids, shows, match, order, under) -> int: the outline's shown records."},
    {"link_parents", link_parents, METH_VARARGS,
     "link_parents(parents, ids, sorted, recent, unique, out, start, stop) -> None: records [start, stop)'s "
     "parent records."},
    {"walk_parents", walk_parents, METH_VARARGS,
     "walk_parents(parents, ids, sorted, recent, unique, seen, cur, out) -> (cur, status)\n"
     "Walk up the parents, appending to `out` (see the source)."},
    {"index_common", index_common, METH_VARARGS,
     "index_common(values, fallback, flush, symbol, flags_tokens, flags_usage, flags_file_op, id_null, run_type, raw_type, "
     "loads, decode_error, line_fallback, paths, path_codes) -> int\n"
     "Index the common entries of `values` (RawValues and LineRuns) into column buffers (see the module "
     "source)."},
    {"branch_points", branch_points, METH_VARARGS,
     "branch_points(first, out) -> int: the records with two children or more, into out."},
    {"count_newlines", count_newlines, METH_VARARGS,
     "count_newlines(data, start, end) -> int: the newlines in data[start:end]."},
    {"scan_entry", scan_entry, METH_O,
     "scan_entry(line: bytes) -> tuple | None: the line scanner's facts of one line (tests)."},
    {"estimate_message", estimate_message, METH_O,
     "estimate_message(message) -> int | None: pi 0.80.2's estimate, or None to decide in Python."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "session_studio.core._bulkindex",
    "The common case of the session loader's column loop, in C (optional).", -1, methods,
};

PyMODINIT_FUNC PyInit__bulkindex(void) {
    if (intern_all() < 0) return NULL;
    return PyModule_Create(&module);
}
