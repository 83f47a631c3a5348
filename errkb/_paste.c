/* errkb._paste: errkb.paste's three scans of a paste, compiled.
 *
 * The regular expressions in errkb/paste.py are the reference and the specification; these
 * functions give the same answers (tests/test_paste_compiled.py compares them on thousands of
 * real, generated and random pastes). Python's regex engine tries each of the log-prefix
 * patterns at every line and pays for every branch; here each pattern is a few comparisons
 * at the start of a line, and lines are found with memchr.
 *
 * Character classes are the ones Python's `re` uses for str patterns: \d is a Unicode
 * decimal, \w a Unicode letter or number or "_", a blank is Unicode whitespace other than "\n".
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t n;
} Text;

static int text_of(PyObject *s, Text *t) {
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "expected a str");
        return -1;
    }
    t->kind = PyUnicode_KIND(s);
    t->data = PyUnicode_DATA(s);
    t->n = PyUnicode_GET_LENGTH(s);
    return 0;
}

/* The character at i, or 0 past the end (0 is in none of the classes below). */
static inline Py_UCS4 at(const Text *t, Py_ssize_t i) { return i < t->n ? PyUnicode_READ(t->kind, t->data, i) : 0; }

static inline int is_blank(Py_UCS4 c) { return c != '\n' && c != 0 && Py_UNICODE_ISSPACE(c); }
static inline int is_digit(Py_UCS4 c) { return c < 128 ? (c >= '0' && c <= '9') : Py_UNICODE_ISDECIMAL(c); }
static inline int is_word(Py_UCS4 c) {
    if (c < 128) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    return Py_UNICODE_ISALNUM(c);
}

/* Where `lit` (ASCII) ends when it starts at i, else -1. */
static Py_ssize_t literal(const Text *t, Py_ssize_t i, const char *lit) {
    if (i < 0) return -1;
    for (; *lit; lit++, i++)
        if (at(t, i) != (Py_UCS4)(unsigned char)*lit) return -1;
    return i;
}

static Py_ssize_t blanks(const Text *t, Py_ssize_t i) {
    while (is_blank(at(t, i))) i++;
    return i;
}

/* One or more blanks, else -1. */
static Py_ssize_t some_blanks(const Text *t, Py_ssize_t i) {
    if (i < 0) return -1;
    Py_ssize_t j = blanks(t, i);
    return j > i ? j : -1;
}

/* One or more digits, else -1. */
static Py_ssize_t some_digits(const Text *t, Py_ssize_t i) {
    if (i < 0) return -1;
    Py_ssize_t j = i;
    while (is_digit(at(t, j))) j++;
    return j > i ? j : -1;
}

/* Exactly `count` digits, else -1. */
static Py_ssize_t digits(const Text *t, Py_ssize_t i, int count) {
    if (i < 0) return -1;
    for (int k = 0; k < count; k++, i++)
        if (!is_digit(at(t, i))) return -1;
    return i;
}

/* One character of `set` (ASCII), else -1. */
static Py_ssize_t one_of(const Text *t, Py_ssize_t i, const char *set) {
    if (i < 0) return -1;
    Py_UCS4 c = at(t, i);
    return c && c < 128 && strchr(set, (int)c) ? i + 1 : -1;
}

/* The first of `words` (ASCII) that starts at i: where it ends, else -1. */
static Py_ssize_t first_word(const Text *t, Py_ssize_t i, const char *const *words) {
    for (; *words; words++) {
        Py_ssize_t e = literal(t, i, *words);
        if (e >= 0) return e;
    }
    return -1;
}

/* \d\d:\d\d:\d\d */
static Py_ssize_t time_of_day(const Text *t, Py_ssize_t i) {
    i = digits(t, i, 2);
    i = literal(t, i, ":");
    i = digits(t, i, 2);
    i = literal(t, i, ":");
    return digits(t, i, 2);
}

/* \d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?  (a fraction is taken only when digits follow) */
static Py_ssize_t timestamp(const Text *t, Py_ssize_t i) {
    i = digits(t, i, 4);
    i = literal(t, i, "-");
    i = digits(t, i, 2);
    i = literal(t, i, "-");
    i = digits(t, i, 2);
    i = one_of(t, i, " T");
    i = time_of_day(t, i);
    if (i >= 0 && one_of(t, i, ".,") >= 0 && is_digit(at(t, i + 1))) i = some_digits(t, i + 1);
    return i;
}

/* ---------------------------------------------------------------- log prefixes
 * One function per alternative of paste._PREFIXES, in its order: where the prefix that starts
 * at i ends, else -1. Each alternative's regex never needs to backtrack into a choice it made
 * (what follows a choice can only match one way), so a straight scan gives the same end. */

/* \(\w+ pid=\d+\)B*   (Ray / vLLM workers) */
static Py_ssize_t worker_prefix(const Text *t, Py_ssize_t i) {
    i = literal(t, i, "(");
    if (i < 0) return -1;
    Py_ssize_t j = i;
    while (is_word(at(t, j))) j++;
    if (j == i) return -1;
    i = literal(t, j, " pid=");
    i = some_digits(t, i);
    i = literal(t, i, ")");
    return i < 0 ? -1 : blanks(t, i);
}

/* \[rank\d+\]:B*   (torchrun) */
static Py_ssize_t rank_prefix(const Text *t, Py_ssize_t i) {
    i = literal(t, i, "[rank");
    i = some_digits(t, i);
    i = literal(t, i, "]:");
    return i < 0 ? -1 : blanks(t, i);
}

static const char *const VLLM_LEVELS[] = {"ERROR", "WARNING", "WARN", "INFO", "DEBUG", "CRITICAL", NULL};

/* LEVEL B+ \d\d-\d\d B+ \d\d:\d\d:\d\d(?:\.\d+)? B+ \[?[\w.-]+(?::\d+)?\] B*   (vLLM) */
static Py_ssize_t vllm_rest(const Text *t, Py_ssize_t i) {
    i = some_blanks(t, i);
    i = digits(t, i, 2);
    i = literal(t, i, "-");
    i = digits(t, i, 2);
    i = some_blanks(t, i);
    i = time_of_day(t, i);
    if (i >= 0 && at(t, i) == '.' && is_digit(at(t, i + 1))) i = some_digits(t, i + 1);
    i = some_blanks(t, i);
    if (i < 0) return -1;
    if (at(t, i) == '[') i++;
    Py_ssize_t j = i;
    for (Py_UCS4 c; (c = at(t, j)) && (c == '.' || c == '-' || is_word(c));) j++;
    if (j == i) return -1;
    if (at(t, j) == ':' && is_digit(at(t, j + 1))) j = some_digits(t, j + 1);
    j = literal(t, j, "]");
    return j < 0 ? -1 : blanks(t, j);
}

static Py_ssize_t vllm_prefix(const Text *t, Py_ssize_t i) {
    for (const char *const *level = VLLM_LEVELS; *level; level++) {  /* the first level whose rest matches */
        Py_ssize_t e = literal(t, i, *level);
        if (e >= 0 && (e = vllm_rest(t, e)) >= 0) return e;
    }
    return -1;
}

/* \[TIMESTAMP(?:B+[\w ]+?)?\]B*   (SGLang: [2025-01-01 12:00:00 TP0]) */
static Py_ssize_t sglang_prefix(const Text *t, Py_ssize_t i) {
    i = literal(t, i, "[");
    i = timestamp(t, i);
    if (i < 0) return -1;
    Py_ssize_t end;
    if (at(t, i) == ']') {
        end = i + 1;
    } else {
        /* Blanks, then at least one of [\w ], then "]". The lazy [\w ]+? stops at the first
         * "]"; when the blank run meets "]" at once, its last blank can be the [\w ] only if it
         * is a space and another blank precedes it. */
        Py_ssize_t words = blanks(t, i), j;
        if (words == i) return -1;
        for (j = words; at(t, j) == ' ' || is_word(at(t, j)); j++) {}
        if (at(t, j) != ']' || (j == words && !(words - i >= 2 && at(t, words - 1) == ' '))) return -1;
        end = j + 1;
    }
    return blanks(t, end);
}

static const char *const PLAIN_LEVELS[] = {"ERROR", "WARNING", "INFO", "DEBUG", NULL};

/* TIMESTAMP B*(?:[-|]B*)?(?:LEVEL B*(?:[-|:]B*)?)?   (Python logging, docker) */
static Py_ssize_t dated_prefix(const Text *t, Py_ssize_t i) {
    i = timestamp(t, i);
    if (i < 0) return -1;
    i = blanks(t, i);
    if (one_of(t, i, "-|") >= 0) i = blanks(t, i + 1);
    Py_ssize_t e = first_word(t, i, PLAIN_LEVELS);
    if (e >= 0) {
        i = blanks(t, e);
        if (one_of(t, i, "-|:") >= 0) i = blanks(t, i + 1);
    }
    return i;
}

static const char *const BARE_LEVELS[] = {"ERROR", "WARNING", "CRITICAL", NULL};

/* LEVEL B*[:|-]B* */
static Py_ssize_t level_prefix(const Text *t, Py_ssize_t i) {
    i = first_word(t, i, BARE_LEVELS);  /* they differ in their first letter: one at most starts here */
    if (i < 0) return -1;
    i = one_of(t, blanks(t, i), ":|-");
    return i < 0 ? -1 : blanks(t, i);
}

/* \d+B*\|B*   (docker compose: "12 | ") */
static Py_ssize_t compose_prefix(const Text *t, Py_ssize_t i) {
    i = some_digits(t, i);
    if (i < 0) return -1;
    i = literal(t, blanks(t, i), "|");
    return i < 0 ? -1 : blanks(t, i);
}

static Py_ssize_t any_prefix(const Text *t, Py_ssize_t i) {
    Py_UCS4 c = at(t, i);
    Py_ssize_t e = -1;
    if (c == '(') return worker_prefix(t, i);
    if (c == '[') return (e = rank_prefix(t, i)) >= 0 ? e : sglang_prefix(t, i);
    if (c == 'E' || c == 'W' || c == 'I' || c == 'D' || c == 'C') return (e = vllm_prefix(t, i)) >= 0 ? e : level_prefix(t, i);
    if (is_digit(c)) return (e = dated_prefix(t, i)) >= 0 ? e : compose_prefix(t, i);
    return -1;
}

/* Whether text[start:end] holds INFO or DEBUG as a whole word (\b(?:INFO|DEBUG)\b in it alone). */
static int logged_below_warning(const Text *t, Py_ssize_t start, Py_ssize_t end) {
    static const char *const levels[] = {"INFO", "DEBUG", NULL};
    for (Py_ssize_t i = start; i < end; i++) {
        if (i > start && is_word(at(t, i - 1))) continue;
        for (const char *const *level = levels; *level; level++) {
            Py_ssize_t e = literal(t, i, *level);
            if (e >= 0 && e <= end && (e == end || !is_word(at(t, e)))) return 1;
        }
    }
    return 0;
}

/* The next "\n" at or after i, else the text's length. */
static Py_ssize_t line_end(const Text *t, Py_ssize_t i) {
    if (i >= t->n) return t->n;
    if (t->kind == PyUnicode_1BYTE_KIND) {
        const char *base = t->data, *hit = memchr(base + i, '\n', (size_t)(t->n - i));
        return hit ? hit - base : t->n;
    }
    while (i < t->n && at(t, i) != '\n') i++;
    return i;
}

static int append_int(PyObject *list, Py_ssize_t value) {
    PyObject *v = PyLong_FromSsize_t(value);
    int rc = v ? PyList_Append(list, v) : -1;
    Py_XDECREF(v);
    return rc;
}

static int append_piece(PyObject *pieces, PyObject *s, Py_ssize_t start, Py_ssize_t end) {
    PyObject *piece = PyUnicode_Substring(s, start, end);
    int rc = piece ? PyList_Append(pieces, piece) : -1;
    Py_XDECREF(piece);
    return rc;
}

PyDoc_STRVAR(strip_prefixes_doc,
"strip_prefixes(plain) -> (text, (new_starts, old_starts) or None, info_lines)\n\n"
"errkb.paste.py_strip_prefixes, compiled.");

static PyObject *strip_prefixes(PyObject *self, PyObject *plain) {
    Text t;
    if (text_of(plain, &t) < 0) return NULL;
    PyObject *pieces = PyList_New(0), *new_starts = PyList_New(0), *old_starts = PyList_New(0), *info = PyList_New(0);
    PyObject *result = NULL;
    if (!pieces || !new_starts || !old_starts || !info) goto done;
    if (append_int(new_starts, 0) < 0 || append_int(old_starts, 0) < 0) goto done;
    Py_ssize_t kept_from = 0, new_len = 0, line = 0;
    for (Py_ssize_t start = 0; start <= t.n; line++) {
        Py_ssize_t end = start, e;
        while ((e = any_prefix(&t, end)) > end) end = e;
        if (end > start) {
            if (append_piece(pieces, plain, kept_from, start) < 0) goto done;
            new_len += start - kept_from;
            if (append_int(new_starts, new_len) < 0 || append_int(old_starts, end) < 0) goto done;
            kept_from = end;
            if (logged_below_warning(&t, start, end) && append_int(info, line) < 0) goto done;
        }
        start = line_end(&t, end) + 1;  /* a prefix never runs past its line */
    }
    if (PyList_GET_SIZE(new_starts) == 1) {  /* nothing cut */
        result = Py_BuildValue("(OOO)", plain, Py_None, info);
        goto done;
    }
    if (append_piece(pieces, plain, kept_from, t.n) < 0) goto done;
    PyObject *empty = PyUnicode_New(0, 0);
    PyObject *text = empty ? PyUnicode_Join(empty, pieces) : NULL;
    Py_XDECREF(empty);
    if (text) result = Py_BuildValue("(N(OO)O)", text, new_starts, old_starts, info);
done:
    Py_XDECREF(pieces);
    Py_XDECREF(new_starts);
    Py_XDECREF(old_starts);
    Py_XDECREF(info);
    return result;
}

/* ---------------------------------------------------------------- traceback frames */

/* Where `needle` (ASCII) next starts at or after i, else -1. */
static Py_ssize_t find_ascii(const Text *t, Py_ssize_t i, const char *needle) {
    size_t len = strlen(needle);
    if (t->kind == PyUnicode_1BYTE_KIND) {
        const char *base = t->data;
        while (i + (Py_ssize_t)len <= t->n) {
            const char *hit = memchr(base + i, needle[0], (size_t)(t->n - i));
            if (!hit) return -1;
            i = hit - base;
            if (i + (Py_ssize_t)len <= t->n && memcmp(hit, needle, len) == 0) return i;
            i++;
        }
        return -1;
    }
    for (; i + (Py_ssize_t)len <= t->n; i++)
        if (literal(t, i, needle) >= 0) return i;
    return -1;
}

PyDoc_STRVAR(find_frames_doc, "find_frames(text) -> [(path, line)]\n\nerrkb.paste.py_find_frames, compiled.");

static PyObject *find_frames(PyObject *self, PyObject *text) {
    Text t;
    if (text_of(text, &t) < 0) return NULL;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; (i = find_ascii(&t, i, "File \"")) >= 0;) {
        Py_ssize_t path = i + 6, quote = path;
        while (quote < t.n && at(&t, quote) != '"') quote++;
        Py_ssize_t number = quote > path ? literal(&t, quote, "\", line ") : -1;
        Py_ssize_t end = some_digits(&t, number);
        if (end < 0 || end - number > 9) {  /* no line number, or one no file has */
            i++;
            continue;
        }
        PyObject *p = PyUnicode_Substring(text, path, quote), *digits_text = PyUnicode_Substring(text, number, end);
        PyObject *n = digits_text ? PyLong_FromUnicodeObject(digits_text, 10) : NULL;
        PyObject *frame = p && n ? PyTuple_Pack(2, p, n) : NULL;
        int rc = frame ? PyList_Append(out, frame) : -1;
        Py_XDECREF(p);
        Py_XDECREF(digits_text);
        Py_XDECREF(n);
        Py_XDECREF(frame);
        if (rc < 0) {
            Py_DECREF(out);
            return NULL;
        }
        i = end;
    }
    return out;
}

/* ---------------------------------------------------------------- message lines */

/* [ \t]*File "[^"\n]*", line \d+ at the start of text[start:end] */
static int is_frame_line(const Text *t, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t i = start;
    while (i < end && (at(t, i) == ' ' || at(t, i) == '\t')) i++;
    i = literal(t, i, "File \"");
    if (i < 0) return 0;
    while (i < end && at(t, i) != '"') i++;
    i = literal(t, i, "\", line ");
    return i >= 0 && i < end && is_digit(at(t, i));
}

/* The line text[start:end] under the frame line at `frame` is its source line: it begins with the
 * frame's indentation and one more blank (code run by exec() has none; the line under it is a message). */
static int is_source_line(const Text *t, Py_ssize_t frame, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t i = 0;
    while (at(t, frame + i) == ' ' || at(t, frame + i) == '\t') {
        if (start + i >= end || at(t, start + i) != at(t, frame + i)) return 0;
        i++;
    }
    return start + i < end && (at(t, start + i) == ' ' || at(t, start + i) == '\t');
}

/* [ \t]*(Traceback ...|During handling ...|The above ...):[ \t]* is the whole of text[start:end] */
static int is_traceback_header(const Text *t, Py_ssize_t start, Py_ssize_t end) {
    static const char *const headers[] = {
        "Traceback (most recent call last)", "During handling of the above exception, another exception occurred",
        "The above exception was the direct cause of the following exception", NULL};
    Py_ssize_t i = start;
    while (i < end && (at(t, i) == ' ' || at(t, i) == '\t')) i++;
    i = first_word(t, i, headers);
    i = literal(t, i, ":");
    if (i < 0) return 0;
    while (i < end && (at(t, i) == ' ' || at(t, i) == '\t')) i++;
    return i == end;
}

static int is_blank_line(const Text *t, Py_ssize_t start, Py_ssize_t end) {
    for (Py_ssize_t i = start; i < end; i++)
        if (!Py_UNICODE_ISSPACE(at(t, i))) return 0;
    return 1;
}

/* The message lines of text as (start, end) pairs; `skip` (a container of line numbers, or
 * None) are left out first, as if they had never been there. */
typedef struct {
    Py_ssize_t start, end;
} Span;

static Span *message_spans(const Text *t, PyObject *skip, Py_ssize_t *count) {
    Py_ssize_t cap = 16, n = 0;
    Span *lines = PyMem_Malloc(cap * sizeof(Span));
    if (!lines) return (Span *)PyErr_NoMemory();
    int skipping = skip != Py_None && PyObject_Length(skip) > 0;
    if (PyErr_Occurred()) goto fail;
    for (Py_ssize_t start = 0, number = 0;; number++) {  /* every line but the skipped ones */
        Py_ssize_t end = line_end(t, start);
        int skipped = 0;
        if (skipping) {
            PyObject *key = PyLong_FromSsize_t(number);
            skipped = key ? PySequence_Contains(skip, key) : -1;
            Py_XDECREF(key);
            if (skipped < 0) goto fail;
        }
        if (!skipped) {
            if (n == cap) {
                Span *grown = PyMem_Realloc(lines, (cap *= 2) * sizeof(Span));
                if (!grown) {
                    PyErr_NoMemory();
                    goto fail;
                }
                lines = grown;
            }
            lines[n++] = (Span){start, end};
        }
        if (end >= t->n) break;
        start = end + 1;
    }
    if (n == 0) lines[n++] = (Span){0, 0};  /* all skipped: what is left is one empty line */
    Py_ssize_t kept = 0;
    for (Py_ssize_t k = 0; k < n; k++) {  /* frames (with the indented source line under them) and headers go */
        if (is_frame_line(t, lines[k].start, lines[k].end)) {
            if (k + 1 < n && is_source_line(t, lines[k].start, lines[k + 1].start, lines[k + 1].end)) k++;
            continue;
        }
        if (!is_traceback_header(t, lines[k].start, lines[k].end)) lines[kept++] = lines[k];
    }
    *count = kept;
    return lines;
fail:
    PyMem_Free(lines);
    return NULL;
}

/* The (text, skip) arguments of message_text and message_lines, and the message's spans. */
static Span *message_args(PyObject *args, const char *format, PyObject **text, Text *t, Py_ssize_t *n) {
    PyObject *skip;
    if (!PyArg_ParseTuple(args, format, text, &skip) || text_of(*text, t) < 0) return NULL;
    return message_spans(t, skip, n);
}

PyDoc_STRVAR(message_text_doc, "message_text(text, skip) -> str\n\nerrkb.paste.py_message_text, compiled.");

static PyObject *message_text(PyObject *self, PyObject *args) {
    PyObject *text;
    Text t;
    Py_ssize_t n;
    Span *lines = message_args(args, "UO:message_text", &text, &t, &n);
    if (!lines) return NULL;
    PyObject *pieces = PyList_New(0), *result = NULL, *newline = PyUnicode_FromString("\n");
    if (!pieces || !newline) goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (append_piece(pieces, text, lines[k].start, lines[k].end) < 0 || PyList_Append(pieces, newline) < 0) goto done;
    }
    PyObject *empty = PyUnicode_New(0, 0);
    if (empty) result = PyUnicode_Join(empty, pieces);
    Py_XDECREF(empty);
done:
    PyMem_Free(lines);
    Py_XDECREF(pieces);
    Py_XDECREF(newline);
    return result;
}

PyDoc_STRVAR(message_lines_doc,
"message_lines(text, skip) -> [(offset, line)]\n\nerrkb.paste.py_message_lines, compiled.");

static PyObject *message_lines(PyObject *self, PyObject *args) {
    PyObject *text;
    Text t;
    Py_ssize_t n;
    Span *lines = message_args(args, "UO:message_lines", &text, &t, &n);
    if (!lines) return NULL;
    PyObject *out = PyList_New(0);
    for (Py_ssize_t k = 0; out && k < n; k++) {
        if (is_blank_line(&t, lines[k].start, lines[k].end)) continue;
        PyObject *line = PyUnicode_Substring(text, lines[k].start, lines[k].end);
        PyObject *item = line ? Py_BuildValue("(nN)", lines[k].start, line) : NULL;
        if (!item || PyList_Append(out, item) < 0) Py_CLEAR(out);
        Py_XDECREF(item);
    }
    PyMem_Free(lines);
    return out;
}

static PyMethodDef methods[] = {
    {"strip_prefixes", strip_prefixes, METH_O, strip_prefixes_doc},
    {"find_frames", find_frames, METH_O, find_frames_doc},
    {"message_text", message_text, METH_VARARGS, message_text_doc},
    {"message_lines", message_lines, METH_VARARGS, message_lines_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "errkb._paste", "errkb.paste's scans, compiled.", -1, methods};

PyMODINIT_FUNC PyInit__paste(void) { return PyModule_Create(&module); }
