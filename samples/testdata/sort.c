/* sort.c - introsort and merge sort for records, with comparators and a binary search. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  uint32_t id;
  int32_t score;
  const char *name;
} record;

typedef int (*record_cmp)(const record *, const record *);

static int cmp_u32(uint32_t a, uint32_t b) { return (a > b) - (a < b); }
static int cmp_i32(int32_t a, int32_t b) { return (a > b) - (a < b); }

int by_id(const record *a, const record *b) { return cmp_u32(a->id, b->id); }
int by_score_desc(const record *a, const record *b) { return cmp_i32(b->score, a->score); }
int by_name(const record *a, const record *b) {
  int c = strcmp(a->name, b->name);
  return c ? c : by_id(a, b);
}

static void swap_records(record *a, record *b) {
  record t = *a;
  *a = *b;
  *b = t;
}

static int less(record_cmp cmp, const record *a, const record *b) { return cmp(a, b) < 0; }

static void insertion_sort(record *v, size_t n, record_cmp cmp) {
  for (size_t i = 1; i < n; i++) {
    record x = v[i];
    size_t j = i;
    while (j > 0 && less(cmp, &x, &v[j - 1])) {
      v[j] = v[j - 1];
      j--;
    }
    v[j] = x;
  }
}

static size_t median_of_three(record *v, size_t a, size_t b, size_t c, record_cmp cmp) {
  if (less(cmp, &v[a], &v[b]))
    return less(cmp, &v[b], &v[c]) ? b : (less(cmp, &v[a], &v[c]) ? c : a);
  return less(cmp, &v[a], &v[c]) ? a : (less(cmp, &v[b], &v[c]) ? c : b);
}

static size_t partition(record *v, size_t n, record_cmp cmp) {
  size_t m = median_of_three(v, 0, n / 2, n - 1, cmp);
  swap_records(&v[m], &v[n - 1]);
  size_t store = 0;
  for (size_t i = 0; i + 1 < n; i++)
    if (less(cmp, &v[i], &v[n - 1]))
      swap_records(&v[i], &v[store++]);
  swap_records(&v[store], &v[n - 1]);
  return store;
}

static void sift_down(record *v, size_t root, size_t n, record_cmp cmp) {
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n)
      return;
    if (child + 1 < n && less(cmp, &v[child], &v[child + 1]))
      child++;
    if (!less(cmp, &v[root], &v[child]))
      return;
    swap_records(&v[root], &v[child]);
    root = child;
  }
}

static void heap_sort(record *v, size_t n, record_cmp cmp) {
  for (size_t i = n / 2; i-- > 0;)
    sift_down(v, i, n, cmp);
  for (size_t end = n; end-- > 1;) {
    swap_records(&v[0], &v[end]);
    sift_down(v, 0, end, cmp);
  }
}

static unsigned floor_log2(size_t n) {
  unsigned l = 0;
  while (n >>= 1)
    l++;
  return l;
}

static void introsort_loop(record *v, size_t n, unsigned depth, record_cmp cmp) {
  while (n > 16) {
    if (depth-- == 0) {
      heap_sort(v, n, cmp);
      return;
    }
    size_t p = partition(v, n, cmp);
    if (p < n - p - 1) {
      introsort_loop(v, p, depth, cmp);
      v += p + 1;
      n -= p + 1;
    } else {
      introsort_loop(v + p + 1, n - p - 1, depth, cmp);
      n = p;
    }
  }
  insertion_sort(v, n, cmp);
}

void records_sort(record *v, size_t n, record_cmp cmp) {
  if (n > 1)
    introsort_loop(v, n, 2 * floor_log2(n), cmp);
}

static void merge_runs(record *v, size_t mid, size_t n, record *tmp, record_cmp cmp) {
  size_t i = 0, j = mid, k = 0;
  while (i < mid && j < n)
    tmp[k++] = less(cmp, &v[j], &v[i]) ? v[j++] : v[i++];
  while (i < mid)
    tmp[k++] = v[i++];
  while (j < n)
    tmp[k++] = v[j++];
  memcpy(v, tmp, n * sizeof *v);
}

/* Stable sort; tmp must hold n records. */
void records_stable_sort(record *v, size_t n, record *tmp, record_cmp cmp) {
  if (n <= 16) {
    insertion_sort(v, n, cmp);
    return;
  }
  size_t mid = n / 2;
  records_stable_sort(v, mid, tmp, cmp);
  records_stable_sort(v + mid, n - mid, tmp, cmp);
  if (less(cmp, &v[mid], &v[mid - 1]))
    merge_runs(v, mid, n, tmp, cmp);
}

const record *records_find(const record *v, size_t n, uint32_t id) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = cmp_u32(v[mid].id, id);
    if (c == 0)
      return &v[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

int records_is_sorted(const record *v, size_t n, record_cmp cmp) {
  for (size_t i = 1; i < n; i++)
    if (less(cmp, &v[i], &v[i - 1]))
      return 0;
  return 1;
}
