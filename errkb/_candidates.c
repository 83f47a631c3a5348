/* errkb._candidates: errkb.candidates' two candidate selections, compiled.
 *
 * The plain-Python classes in errkb/candidates.py are the reference; these types give the
 * same answers (tests/test_candidates.py compares them on thousands of pastes). The gain is
 * not cleverness: a paste's tokens are looked up in the index's own hash table straight from
 * the text, so no Python string, set or dict is made per token, and the per-entry checks are
 * loops over small integer arrays.
 *
 * Both types keep scratch arrays between calls (stamps, sums); they rely on the GIL and are
 * not re-entrant, which matching never needs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RESOLUTION 1e9
#define SLACK 1e-9

/* ------------------------------------------------------------------ vocabulary */

/* Strings of code points -> dense ids 0..n-1, open addressing. */
typedef struct {
    Py_ssize_t n;
    Py_UCS4 **keys;
    Py_ssize_t *lens;
    int32_t *slots; /* -1: empty */
    size_t mask;
} Vocab;

static uint64_t hash_step(uint64_t h, Py_UCS4 c) { return (h ^ (uint64_t)c) * 1099511628211ULL; }
#define HASH_SEED 14695981039346656037ULL

static void vocab_free(Vocab *v) {
    if (v->keys) {
        for (Py_ssize_t i = 0; i < v->n; i++) PyMem_Free(v->keys[i]);
    }
    PyMem_Free(v->keys);
    PyMem_Free(v->lens);
    PyMem_Free(v->slots);
    memset(v, 0, sizeof(*v));
}

/* Fill from a list of distinct str; id = position in the list. */
static int vocab_init(Vocab *v, PyObject *strings) {
    Py_ssize_t n = PyList_Size(strings);
    if (n < 0) return -1;
    size_t cap = 16;
    while (cap < (size_t)n * 2 + 1) cap <<= 1;
    v->n = 0;
    v->keys = PyMem_Calloc(n ? n : 1, sizeof(Py_UCS4 *));
    v->lens = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    v->slots = PyMem_Malloc(cap * sizeof(int32_t));
    v->mask = cap - 1;
    if (!v->keys || !v->lens || !v->slots) { PyErr_NoMemory(); return -1; }
    memset(v->slots, 0xff, cap * sizeof(int32_t));
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PyList_GET_ITEM(strings, i);
        if (!PyUnicode_Check(s)) { PyErr_SetString(PyExc_TypeError, "vocabulary entries must be str"); return -1; }
        Py_UCS4 *chars = PyUnicode_AsUCS4Copy(s);
        if (!chars) return -1;
        Py_ssize_t len = PyUnicode_GET_LENGTH(s);
        v->keys[i] = chars;
        v->lens[i] = len;
        v->n = i + 1;
        uint64_t h = HASH_SEED;
        for (Py_ssize_t k = 0; k < len; k++) h = hash_step(h, chars[k]);
        size_t slot = (size_t)h & v->mask;
        while (v->slots[slot] >= 0) slot = (slot + 1) & v->mask;
        v->slots[slot] = (int32_t)i;
    }
    return 0;
}

/* The id of text[start:end] (lower-cased when `lower`, ASCII letters only), whose hash is h, or -1. */
static int32_t vocab_find_hashed(const Vocab *v, uint64_t h, int kind, const void *data, Py_ssize_t start,
                                 Py_ssize_t end, int lower) {
    Py_ssize_t len = end - start;
    for (size_t slot = (size_t)h & v->mask;; slot = (slot + 1) & v->mask) {
        int32_t id = v->slots[slot];
        if (id < 0) return -1;
        if (v->lens[id] != len) continue;
        const Py_UCS4 *key = v->keys[id];
        Py_ssize_t k = 0;
        for (; k < len; k++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, start + k);
            if (lower && c >= 'A' && c <= 'Z') c += 'a' - 'A';
            if (c != key[k]) break;
        }
        if (k == len) return id;
    }
}

static int32_t vocab_find(const Vocab *v, int kind, const void *data, Py_ssize_t start, Py_ssize_t end, int lower) {
    uint64_t h = HASH_SEED;
    for (Py_ssize_t k = start; k < end; k++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, k);
        if (lower && c >= 'A' && c <= 'Z') c += 'a' - 'A';
        h = hash_step(h, c);
    }
    return vocab_find_hashed(v, h, kind, data, start, end, lower);
}

/* A stamp per id marks "seen in this call" without clearing arrays between calls. */
static uint32_t next_epoch(uint32_t *epoch, uint32_t *stamps, Py_ssize_t n) {
    if (++*epoch == 0) {
        memset(stamps, 0, (size_t)n * sizeof(uint32_t));
        *epoch = 1;
    }
    return *epoch;
}

/* A list of Python ints -> a fresh int32 array (NULL on error). */
static int32_t *int_array(PyObject *seq, Py_ssize_t *len) {
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int32_t *out = PyMem_Malloc((n ? n : 1) * sizeof(int32_t));
    if (!out) { Py_DECREF(fast); PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < n; i++) {
        long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (x == -1 && PyErr_Occurred()) { PyMem_Free(out); Py_DECREF(fast); return NULL; }
        out[i] = (int32_t)x;
    }
    Py_DECREF(fast);
    *len = n;
    return out;
}

/* Compressed rows: row r is items[start[r] .. start[r+1]). */
typedef struct {
    Py_ssize_t rows;
    Py_ssize_t *start;
    int32_t *items;
} Rows;

static void rows_free(Rows *r) { PyMem_Free(r->start); PyMem_Free(r->items); memset(r, 0, sizeof(*r)); }

static int rows_alloc(Rows *r, Py_ssize_t rows, Py_ssize_t items) {
    r->rows = rows;
    r->start = PyMem_Calloc(rows + 1, sizeof(Py_ssize_t));
    r->items = PyMem_Malloc((items ? items : 1) * sizeof(int32_t));
    if (!r->start || !r->items) { PyErr_NoMemory(); return -1; }
    return 0;
}

/* From a list of lists of ints. */
static int rows_from_lists(Rows *r, PyObject *lists) {
    Py_ssize_t n = PyList_Size(lists), total = 0;
    if (n < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len = PyObject_Length(PyList_GET_ITEM(lists, i));
        if (len < 0) return -1;
        total += len;
    }
    if (rows_alloc(r, n, total) < 0) return -1;
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len;
        int32_t *row = int_array(PyList_GET_ITEM(lists, i), &len);
        if (!row) return -1;
        memcpy(r->items + at, row, (size_t)len * sizeof(int32_t));
        PyMem_Free(row);
        r->start[i] = at;
        at += len;
    }
    r->start[n] = at;
    return 0;
}

/* \w as Python's re reads it in a str pattern: alphanumeric (Unicode) or underscore; ASCII,
 * nearly every character of a paste, without a call. */
static int is_token_char(Py_UCS4 c) {
    if (c < 128) return c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
    return Py_UNICODE_ISALNUM(c);
}
static unsigned char latin1_token_char[256]; /* is_token_char for one-byte strings, filled at import */
static int is_word_start(Py_UCS4 c) { return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static int is_word_char(Py_UCS4 c) { return is_word_start(c) || (c >= '0' && c <= '9'); }

/* ------------------------------------------------------------------ ExactCandidates */

typedef struct {
    PyObject_HEAD
    Vocab tokens;
    Py_ssize_t *groups_of;  /* token t's groups (as first token): groups_of[t] .. groups_of[t + 1] */
    int32_t *second;        /* group -> its second token id */
    Py_ssize_t *entries_of; /* group g's entries: entries_of[g] .. entries_of[g + 1] */
    int32_t *entry_pos; /* entry -> position in the index */
    Rows entry_tokens;  /* entry -> token ids */
    PyObject *pieces;   /* list: position -> tuple of str */
    Py_ssize_t limit;
    uint32_t *stamp, epoch;
    int32_t *firsts, *hits;
    Py_ssize_t n_entries;
} ExactObject;

static void Exact_dealloc(ExactObject *self) {
    vocab_free(&self->tokens);
    PyMem_Free(self->groups_of);
    PyMem_Free(self->entries_of);
    rows_free(&self->entry_tokens);
    PyMem_Free(self->second);
    PyMem_Free(self->entry_pos);
    PyMem_Free(self->stamp);
    PyMem_Free(self->firsts);
    PyMem_Free(self->hits);
    Py_XDECREF(self->pieces);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ExactCandidates(tokens, groups, pieces, limit); groups: [(first id, second id, [(position, [token ids])])] */
static int Exact_init(ExactObject *self, PyObject *args, PyObject *kwds) {
    PyObject *tokens, *groups, *pieces;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "O!O!O!n", &PyList_Type, &tokens, &PyList_Type, &groups, &PyList_Type, &pieces, &limit))
        return -1;
    if (self->stamp) { PyErr_SetString(PyExc_RuntimeError, "already initialised"); return -1; }
    if (vocab_init(&self->tokens, tokens) < 0) return -1;
    Py_ssize_t nt = self->tokens.n, ng = PyList_GET_SIZE(groups), ne = 0, ntok = 0;
    /* count the groups per first token and the entries and token ids in all */
    Py_ssize_t *per_first = PyMem_Calloc(nt + 1, sizeof(Py_ssize_t));
    if (!per_first) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t g = 0; g < ng; g++) {
        PyObject *item = PyList_GET_ITEM(groups, g), *members;
        long first, second;
        if (!PyArg_ParseTuple(item, "llO!", &first, &second, &PyList_Type, &members) || first < 0 || first >= nt ||
            second < 0 || second >= nt) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "group token id out of range");
            PyMem_Free(per_first);
            return -1;
        }
        per_first[first]++;
        ne += PyList_GET_SIZE(members);
        for (Py_ssize_t e = 0; e < PyList_GET_SIZE(members); e++) {
            PyObject *member = PyList_GET_ITEM(members, e);
            if (!PyTuple_Check(member) || PyTuple_GET_SIZE(member) != 2) {
                PyErr_SetString(PyExc_TypeError, "a group member is (position, [token ids])");
                PyMem_Free(per_first);
                return -1;
            }
            Py_ssize_t len = PyObject_Length(PyTuple_GET_ITEM(member, 1));
            if (len < 0) { PyMem_Free(per_first); return -1; }
            ntok += len;
        }
    }
    /* groups are laid out by first token: an order of the given groups sorted by first id */
    int ok = rows_alloc(&self->entry_tokens, ne, ntok) == 0;
    self->groups_of = PyMem_Calloc(nt + 1, sizeof(Py_ssize_t));
    self->entries_of = PyMem_Calloc(ng + 1, sizeof(Py_ssize_t));
    self->second = PyMem_Malloc((ng ? ng : 1) * sizeof(int32_t));
    self->entry_pos = PyMem_Malloc((ne ? ne : 1) * sizeof(int32_t));
    if (!ok || !self->groups_of || !self->entries_of || !self->second || !self->entry_pos) { PyMem_Free(per_first); if (!PyErr_Occurred()) PyErr_NoMemory(); return -1; }
    Py_ssize_t at = 0;
    for (Py_ssize_t t = 0; t < nt; t++) { self->groups_of[t] = at; at += per_first[t]; }
    self->groups_of[nt] = at;
    memset(per_first, 0, (nt + 1) * sizeof(Py_ssize_t)); /* now: groups placed so far per first token */
    /* place each group: slot = start[first] + placed; entries follow in slot order */
    int32_t *slot_of = PyMem_Malloc((ng ? ng : 1) * sizeof(int32_t));
    if (!slot_of) { PyMem_Free(per_first); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t g = 0; g < ng; g++) {
        long first = PyLong_AsLong(PyTuple_GET_ITEM(PyList_GET_ITEM(groups, g), 0));
        Py_ssize_t slot = self->groups_of[first] + per_first[first]++;
        slot_of[slot] = (int32_t)g;
    }
    Py_ssize_t e_at = 0, t_at = 0;
    for (Py_ssize_t slot = 0; slot < ng; slot++) {
        PyObject *item = PyList_GET_ITEM(groups, slot_of[slot]);
        PyObject *members = PyTuple_GET_ITEM(item, 2);
        self->second[slot] = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(item, 1));
        self->entries_of[slot] = e_at;
        for (Py_ssize_t m = 0; m < PyList_GET_SIZE(members); m++) {
            PyObject *member = PyList_GET_ITEM(members, m);
            long pos = PyLong_AsLong(PyTuple_GET_ITEM(member, 0));
            if (pos == -1 && PyErr_Occurred()) goto fail;
            Py_ssize_t len;
            int32_t *ids = int_array(PyTuple_GET_ITEM(member, 1), &len);
            if (!ids) goto fail;
            for (Py_ssize_t k = 0; k < len; k++) {
                if (ids[k] < 0 || ids[k] >= nt) { PyMem_Free(ids); PyErr_SetString(PyExc_ValueError, "token id out of range"); goto fail; }
            }
            self->entry_pos[e_at] = (int32_t)pos;
            self->entry_tokens.start[e_at] = t_at;
            memcpy(self->entry_tokens.items + t_at, ids, (size_t)len * sizeof(int32_t));
            PyMem_Free(ids);
            t_at += len;
            e_at++;
        }
    }
    self->entries_of[ng] = e_at;
    self->entry_tokens.start[ne] = t_at;
    PyMem_Free(slot_of);
    PyMem_Free(per_first);
    self->n_entries = ne;
    self->limit = limit;
    Py_INCREF(pieces);
    self->pieces = pieces;
    self->stamp = PyMem_Calloc(nt ? nt : 1, sizeof(uint32_t));
    self->firsts = PyMem_Malloc((nt ? nt : 1) * sizeof(int32_t));
    self->hits = PyMem_Malloc((ne ? ne : 1) * sizeof(int32_t));
    if (!self->stamp || !self->firsts || !self->hits) { PyErr_NoMemory(); return -1; }
    return 0;
fail:
    PyMem_Free(slot_of);
    PyMem_Free(per_first);
    return -1;
}

static int compare_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The first occurrence of needle in haystack (one-byte strings), or -1. */
static Py_ssize_t find_bytes(const Py_UCS1 *haystack, Py_ssize_t n, const Py_UCS1 *needle, Py_ssize_t m) {
    if (m == 0) return 0;
    for (Py_ssize_t i = 0; i + m <= n;) {
        const Py_UCS1 *hit = memchr(haystack + i, needle[0], (size_t)(n - m - i + 1));
        if (!hit) return -1;
        i = hit - haystack;
        if (memcmp(hit + 1, needle + 1, (size_t)(m - 1)) == 0) return i;
        i++;
    }
    return -1;
}

/* Whether every piece of `pieces` is in `text`, each after the end of the one before. */
static int in_order(PyObject *pieces, PyObject *text) {
    Py_ssize_t pos = 0, end = PyUnicode_GET_LENGTH(text);
    int one_byte = PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND;
    const Py_UCS1 *data = PyUnicode_DATA(text);
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(pieces); k++) {
        PyObject *piece = PyTuple_GET_ITEM(pieces, k);
        Py_ssize_t at, len = PyUnicode_GET_LENGTH(piece);
        if (one_byte && PyUnicode_KIND(piece) == PyUnicode_1BYTE_KIND) {
            at = find_bytes(data + pos, end - pos, PyUnicode_DATA(piece), len);
            if (at >= 0) at += pos;
        } else {
            at = PyUnicode_Find(text, piece, pos, end, 1);
            if (at == -2) return -1;
        }
        if (at < 0) return 0;
        pos = at + len;
    }
    return 1;
}

static PyObject *Exact_find(ExactObject *self, PyObject *args) {
    PyObject *message, *text;
    if (!PyArg_ParseTuple(args, "UU", &message, &text)) return NULL;
    uint32_t epoch = next_epoch(&self->epoch, self->stamp, self->tokens.n);
    int kind = PyUnicode_KIND(message);
    const void *data = PyUnicode_DATA(message);
    Py_ssize_t len = PyUnicode_GET_LENGTH(message), nf = 0, nh = 0;
    for (Py_ssize_t i = 0; i < len;) {
        Py_ssize_t j = i;
        uint64_t h = HASH_SEED;
        if (kind == PyUnicode_1BYTE_KIND) { /* nearly every paste: a table and the hash in one pass */
            const Py_UCS1 *chars = data;
            while (j < len && latin1_token_char[chars[j]]) h = hash_step(h, chars[j++]);
        } else {
            for (Py_UCS4 c; j < len && is_token_char(c = PyUnicode_READ(kind, data, j)); j++) h = hash_step(h, c);
        }
        if (j == i) { i++; continue; }
        int32_t id = vocab_find_hashed(&self->tokens, h, kind, data, i, j, 0);
        if (id >= 0 && self->stamp[id] != epoch) {
            self->stamp[id] = epoch;
            if (self->groups_of[id + 1] > self->groups_of[id]) self->firsts[nf++] = id;
        }
        i = j;
    }
    for (Py_ssize_t f = 0; f < nf; f++) {
        int32_t first = self->firsts[f];
        for (Py_ssize_t g = self->groups_of[first]; g < self->groups_of[first + 1]; g++) {
            if (self->stamp[self->second[g]] != epoch) continue;
            for (Py_ssize_t e = self->entries_of[g]; e < self->entries_of[g + 1]; e++) {
                Py_ssize_t t = self->entry_tokens.start[e], t_end = self->entry_tokens.start[e + 1];
                while (t < t_end && self->stamp[self->entry_tokens.items[t]] == epoch) t++;
                if (t == t_end) self->hits[nh++] = self->entry_pos[e];
            }
        }
    }
    qsort(self->hits, (size_t)nh, sizeof(int32_t), compare_int32);
    if (nh > self->limit) nh = self->limit;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t h = 0; h < nh; h++) {
        PyObject *pieces = PyList_GetItem(self->pieces, self->hits[h]);
        if (!pieces || !PyTuple_Check(pieces)) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "pieces must be tuples of str");
            Py_DECREF(out);
            return NULL;
        }
        int found = in_order(pieces, text);
        if (found < 0) { Py_DECREF(out); return NULL; }
        if (found) {
            PyObject *pos = PyLong_FromLong(self->hits[h]);
            if (!pos || PyList_Append(out, pos) < 0) { Py_XDECREF(pos); Py_DECREF(out); return NULL; }
            Py_DECREF(pos);
        }
    }
    return out;
}

static PyMethodDef Exact_methods[] = {
    {"find", (PyCFunction)Exact_find, METH_VARARGS,
     "find(message_text, text) -> positions: the first `limit` entries whose tokens are all in "
     "message_text, ascending, that hold their pieces in text in order"},
    {NULL}};

static PyTypeObject ExactType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "errkb._candidates.ExactCandidates",
    .tp_basicsize = sizeof(ExactObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Exact candidates (see errkb.candidates.PyExactCandidates, the reference).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Exact_init,
    .tp_dealloc = (destructor)Exact_dealloc,
    .tp_methods = Exact_methods,
};

/* ------------------------------------------------------------------ WeightedCandidates */

typedef struct {
    PyObject_HEAD
    Vocab words;
    double *idf;
    char *common;
    Rows entry_words; /* entry -> word ids, in the plan's order */
    double *weight;
    Rows postings;    /* word id -> entries holding it, ascending */
    Rows anchors;     /* word id -> entries whose rarest word it is */
    Py_ssize_t limit, n_entries;
    uint32_t *word_stamp, word_epoch, *entry_stamp, entry_epoch;
    int32_t *found, *touched;
    double *gained;
    struct scored { int64_t coverage, gained; int32_t pos; double value; } *scored;
} WeightedObject;

static void Weighted_dealloc(WeightedObject *self) {
    vocab_free(&self->words);
    rows_free(&self->entry_words);
    rows_free(&self->postings);
    rows_free(&self->anchors);
    PyMem_Free(self->idf);
    PyMem_Free(self->common);
    PyMem_Free(self->weight);
    PyMem_Free(self->word_stamp);
    PyMem_Free(self->entry_stamp);
    PyMem_Free(self->found);
    PyMem_Free(self->touched);
    PyMem_Free(self->gained);
    PyMem_Free(self->scored);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static double *double_array(PyObject *list, Py_ssize_t n) {
    if (PyList_Size(list) != n) { if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "list has the wrong length"); return NULL; }
    double *out = PyMem_Malloc((n ? n : 1) * sizeof(double));
    if (!out) { PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = PyFloat_AsDouble(PyList_GET_ITEM(list, i));
        if (out[i] == -1.0 && PyErr_Occurred()) { PyMem_Free(out); return NULL; }
    }
    return out;
}

/* WeightedCandidates(words, idf, common, entry_words, entry_weight, anchors, limit) */
static int Weighted_init(WeightedObject *self, PyObject *args, PyObject *kwds) {
    PyObject *words, *idf, *common, *entry_words, *weight, *anchors;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!n", &PyList_Type, &words, &PyList_Type, &idf, &PyList_Type, &common,
                          &PyList_Type, &entry_words, &PyList_Type, &weight, &PyList_Type, &anchors, &limit))
        return -1;
    if (self->word_stamp) { PyErr_SetString(PyExc_RuntimeError, "already initialised"); return -1; }
    if (vocab_init(&self->words, words) < 0) return -1;
    Py_ssize_t nw = self->words.n, ne = PyList_GET_SIZE(entry_words);
    if (!(self->idf = double_array(idf, nw)) || !(self->weight = double_array(weight, ne))) return -1;
    if (PyList_GET_SIZE(common) != nw || PyList_GET_SIZE(anchors) != nw) {
        PyErr_SetString(PyExc_ValueError, "common and anchors need one item per word");
        return -1;
    }
    self->common = PyMem_Malloc(nw ? nw : 1);
    if (!self->common) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t w = 0; w < nw; w++) {
        int truth = PyObject_IsTrue(PyList_GET_ITEM(common, w));
        if (truth < 0) return -1;
        self->common[w] = (char)truth;
    }
    if (rows_from_lists(&self->entry_words, entry_words) < 0 || rows_from_lists(&self->anchors, anchors) < 0) return -1;
    for (Py_ssize_t k = 0; k < self->entry_words.start[ne]; k++) {
        if (self->entry_words.items[k] < 0 || self->entry_words.items[k] >= nw) { PyErr_SetString(PyExc_ValueError, "word id out of range"); return -1; }
    }
    for (Py_ssize_t k = 0; k < self->anchors.start[nw]; k++) {
        if (self->anchors.items[k] < 0 || self->anchors.items[k] >= ne) { PyErr_SetString(PyExc_ValueError, "entry out of range"); return -1; }
    }
    /* postings: entries in ascending order per word */
    Py_ssize_t total = self->entry_words.start[ne];
    if (rows_alloc(&self->postings, nw, total) < 0) return -1;
    for (Py_ssize_t k = 0; k < total; k++) self->postings.start[self->entry_words.items[k] + 1]++;
    for (Py_ssize_t w = 0; w < nw; w++) self->postings.start[w + 1] += self->postings.start[w];
    Py_ssize_t *fill = PyMem_Malloc((nw ? nw : 1) * sizeof(Py_ssize_t));
    if (!fill) { PyErr_NoMemory(); return -1; }
    memcpy(fill, self->postings.start, (nw ? nw : 1) * sizeof(Py_ssize_t));
    for (Py_ssize_t e = 0; e < ne; e++)
        for (Py_ssize_t k = self->entry_words.start[e]; k < self->entry_words.start[e + 1]; k++)
            self->postings.items[fill[self->entry_words.items[k]]++] = (int32_t)e;
    PyMem_Free(fill);
    self->limit = limit;
    self->n_entries = ne;
    self->word_stamp = PyMem_Calloc(nw ? nw : 1, sizeof(uint32_t));
    self->entry_stamp = PyMem_Calloc(ne ? ne : 1, sizeof(uint32_t));
    self->found = PyMem_Malloc((nw ? nw : 1) * sizeof(int32_t));
    self->touched = PyMem_Malloc((ne ? ne : 1) * sizeof(int32_t));
    self->gained = PyMem_Malloc((ne ? ne : 1) * sizeof(double));
    self->scored = PyMem_Malloc((ne ? ne : 1) * sizeof(struct scored));
    if (!self->word_stamp || !self->entry_stamp || !self->found || !self->touched || !self->gained || !self->scored) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static int64_t quantum(double x) { return (int64_t)floor(x * RESOLUTION + 0.5); }

static int compare_scored(const void *a, const void *b) {
    const struct scored *x = a, *y = b;
    if (x->coverage != y->coverage) return x->coverage > y->coverage ? -1 : 1;
    if (x->gained != y->gained) return x->gained > y->gained ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static PyObject *Weighted_find(WeightedObject *self, PyObject *args) {
    PyObject *message;
    double min_coverage;
    if (!PyArg_ParseTuple(args, "Ud", &message, &min_coverage)) return NULL;
    uint32_t wep = next_epoch(&self->word_epoch, self->word_stamp, self->words.n);
    uint32_t eep = next_epoch(&self->entry_epoch, self->entry_stamp, self->n_entries);
    int kind = PyUnicode_KIND(message);
    const void *data = PyUnicode_DATA(message);
    Py_ssize_t len = PyUnicode_GET_LENGTH(message), nf = 0, nt = 0, ns = 0;
    /* the words, as errkb.candidates.word_list reads them: [A-Za-z_][A-Za-z0-9_]{2,}, once each */
    for (Py_ssize_t i = 0; i < len;) {
        if (!is_word_start(PyUnicode_READ(kind, data, i))) { i++; continue; }
        Py_ssize_t j = i + 1;
        while (j < len && is_word_char(PyUnicode_READ(kind, data, j))) j++;
        if (j - i >= 3) {
            int32_t id = vocab_find(&self->words, kind, data, i, j, 1);
            if (id >= 0 && self->word_stamp[id] != wep) {
                self->word_stamp[id] = wep;
                self->found[nf++] = id;
            }
        }
        i = j;
    }
    double common_total = 0.0;
    for (Py_ssize_t f = 0; f < nf; f++) {
        int32_t w = self->found[f];
        if (self->common[w]) { common_total += self->idf[w]; continue; }
        for (Py_ssize_t k = self->postings.start[w]; k < self->postings.start[w + 1]; k++) {
            int32_t e = self->postings.items[k];
            if (self->entry_stamp[e] != eep) { self->entry_stamp[e] = eep; self->gained[e] = 0.0; self->touched[nt++] = e; }
            self->gained[e] += self->idf[w];
        }
    }
    for (Py_ssize_t f = 0; f < nf; f++) {
        int32_t w = self->found[f];
        if (!self->common[w]) continue;
        for (Py_ssize_t k = self->anchors.start[w]; k < self->anchors.start[w + 1]; k++) {
            int32_t e = self->anchors.items[k];
            if (self->entry_stamp[e] != eep) { self->entry_stamp[e] = eep; self->gained[e] = 0.0; self->touched[nt++] = e; }
        }
    }
    for (Py_ssize_t t = 0; t < nt; t++) {
        int32_t e = self->touched[t];
        double g = self->gained[e], weight = self->weight[e], needed = min_coverage * weight - SLACK;
        if (g + common_total < needed) continue;
        Py_ssize_t k = self->entry_words.start[e], k_end = self->entry_words.start[e + 1];
        int all = 1;
        for (Py_ssize_t j = k; j < k_end; j++) {
            if (self->word_stamp[self->entry_words.items[j]] != wep) { all = 0; break; }
        }
        struct scored *s = &self->scored[ns];
        s->pos = e;
        if (all) {
            s->coverage = quantum(1.0); s->gained = quantum(weight); s->value = 1.0; ns++;
            continue;
        }
        for (Py_ssize_t j = k; j < k_end; j++) {
            int32_t w = self->entry_words.items[j];
            if (self->common[w] && self->word_stamp[w] == wep) g += self->idf[w];
        }
        if (g >= needed) { s->coverage = quantum(g / weight); s->gained = quantum(g); s->value = g / weight; ns++; }
    }
    qsort(self->scored, (size_t)ns, sizeof(struct scored), compare_scored);
    if (ns > self->limit) ns = self->limit;
    PyObject *out = PyList_New(ns);
    if (!out) return NULL;
    for (Py_ssize_t k = 0; k < ns; k++) {
        PyObject *item = Py_BuildValue("(id)", (int)self->scored[k].pos, self->scored[k].value);
        if (!item) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k, item);
    }
    return out;
}

static PyMethodDef Weighted_methods[] = {
    {"find", (PyCFunction)Weighted_find, METH_VARARGS,
     "find(message_text, min_coverage) -> [(position, coverage)], best covered first"},
    {NULL}};

static PyTypeObject WeightedType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "errkb._candidates.WeightedCandidates",
    .tp_basicsize = sizeof(WeightedObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Weighted candidates (see errkb.candidates.PyWeightedCandidates, the reference).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Weighted_init,
    .tp_dealloc = (destructor)Weighted_dealloc,
    .tp_methods = Weighted_methods,
};

/* ------------------------------------------------------------------ module */

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "errkb._candidates",
                                    "errkb.candidates' selections, compiled (the Python classes are the reference).", -1, NULL};

PyMODINIT_FUNC PyInit__candidates(void) {
    for (int c = 0; c < 256; c++) latin1_token_char[c] = (unsigned char)is_token_char((Py_UCS4)c);
    if (PyType_Ready(&ExactType) < 0 || PyType_Ready(&WeightedType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ExactType);
    Py_INCREF(&WeightedType);
    if (PyModule_AddObject(m, "ExactCandidates", (PyObject *)&ExactType) < 0 ||
        PyModule_AddObject(m, "WeightedCandidates", (PyObject *)&WeightedType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
