/* hashtable.c - open-addressing string->int hash table (FNV-1a, linear probing, tombstones). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *key;
  int value;
  uint32_t hash;
} ht_slot;

typedef struct {
  ht_slot *slots;
  size_t cap;   /* always a power of two */
  size_t count; /* live entries */
  size_t used;  /* live entries + tombstones */
} hashtable;

static char tombstone_marker;
#define TOMBSTONE (&tombstone_marker)

static uint32_t fnv1a(const char *s) {
  uint32_t h = 2166136261u;
  while (*s) {
    h ^= (unsigned char)*s++;
    h *= 16777619u;
  }
  return h ? h : 1;
}

static size_t slot_index(const hashtable *t, uint32_t hash) { return hash & (t->cap - 1); }
static size_t next_index(const hashtable *t, size_t i) { return (i + 1) & (t->cap - 1); }
static int slot_is_empty(const ht_slot *s) { return s->key == NULL; }
static int slot_is_tombstone(const ht_slot *s) { return s->key == TOMBSTONE; }
static int slot_is_live(const ht_slot *s) { return !slot_is_empty(s) && !slot_is_tombstone(s); }

static int slot_matches(const ht_slot *s, const char *key, uint32_t hash) {
  return slot_is_live(s) && s->hash == hash && strcmp(s->key, key) == 0;
}

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p)
    memcpy(p, s, n);
  return p;
}

int ht_init(hashtable *t, size_t cap) {
  size_t c = 8;
  while (c < cap)
    c <<= 1;
  t->slots = calloc(c, sizeof(ht_slot));
  t->cap = c;
  t->count = t->used = 0;
  return t->slots ? 0 : -1;
}

void ht_free(hashtable *t) {
  for (size_t i = 0; i < t->cap; i++)
    if (slot_is_live(&t->slots[i]))
      free(t->slots[i].key);
  free(t->slots);
  t->slots = NULL;
  t->cap = t->count = t->used = 0;
}

static ht_slot *find_slot(const hashtable *t, const char *key, uint32_t hash) {
  size_t i = slot_index(t, hash);
  ht_slot *first_free = NULL;
  for (;;) {
    ht_slot *s = &t->slots[i];
    if (slot_is_empty(s))
      return first_free ? first_free : s;
    if (slot_is_tombstone(s)) {
      if (!first_free)
        first_free = s;
    } else if (slot_matches(s, key, hash)) {
      return s;
    }
    i = next_index(t, i);
  }
}

static int needs_grow(const hashtable *t) { return (t->used + 1) * 4 > t->cap * 3; }

static int rehash(hashtable *t, size_t new_cap) {
  hashtable n;
  if (ht_init(&n, new_cap) != 0)
    return -1;
  for (size_t i = 0; i < t->cap; i++) {
    ht_slot *s = &t->slots[i];
    if (!slot_is_live(s))
      continue;
    ht_slot *d = find_slot(&n, s->key, s->hash);
    *d = *s;
    n.count++;
    n.used++;
  }
  free(t->slots);
  *t = n;
  return 0;
}

int ht_put(hashtable *t, const char *key, int value) {
  if (needs_grow(t) && rehash(t, t->cap * 2) != 0)
    return -1;
  uint32_t h = fnv1a(key);
  ht_slot *s = find_slot(t, key, h);
  if (slot_is_live(s)) {
    s->value = value;
    return 0;
  }
  char *k = dup_string(key);
  if (!k)
    return -1;
  if (slot_is_empty(s))
    t->used++;
  s->key = k;
  s->hash = h;
  s->value = value;
  t->count++;
  return 0;
}

int ht_get(const hashtable *t, const char *key, int *out) {
  ht_slot *s = find_slot(t, key, fnv1a(key));
  if (!slot_is_live(s))
    return 0;
  *out = s->value;
  return 1;
}

int ht_remove(hashtable *t, const char *key) {
  ht_slot *s = find_slot(t, key, fnv1a(key));
  if (!slot_is_live(s))
    return 0;
  free(s->key);
  s->key = TOMBSTONE;
  t->count--;
  return 1;
}

int ht_increment(hashtable *t, const char *key, int by) {
  int v = 0;
  ht_get(t, key, &v);
  return ht_put(t, key, v + by);
}
