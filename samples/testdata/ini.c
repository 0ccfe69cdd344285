/* ini.c - streaming INI file tokenizer/parser with a section/key/value callback. */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

typedef int (*ini_handler)(void *user, const char *section, const char *key, const char *value);

enum { INI_MAX_LINE = 256, INI_MAX_SECTION = 64 };

typedef struct {
  const char *p;
  const char *end;
  int line;
} ini_reader;

static int at_end(const ini_reader *r) { return r->p >= r->end; }
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
static int is_comment_start(char c) { return c == ';' || c == '#'; }

static char *skip_space(char *s) {
  while (*s && is_space(*s))
    s++;
  return s;
}

static char *rstrip(char *s) {
  char *e = s + strlen(s);
  while (e > s && is_space(e[-1]))
    *--e = '\0';
  return s;
}

static char *find_char_or_comment(char *s, char c) {
  int was_space = 0;
  while (*s && *s != c && !(was_space && is_comment_start(*s))) {
    was_space = is_space(*s);
    s++;
  }
  return s;
}

static void copy_bounded(char *dst, const char *src, size_t size) {
  size_t n = strlen(src);
  if (n >= size)
    n = size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* Reads one line into buf (without the newline); returns 0 at end of input. */
static int read_line(ini_reader *r, char *buf, size_t size) {
  if (at_end(r))
    return 0;
  size_t n = 0;
  while (!at_end(r) && *r->p != '\n') {
    if (n + 1 < size)
      buf[n++] = *r->p;
    r->p++;
  }
  if (!at_end(r))
    r->p++;
  buf[n] = '\0';
  r->line++;
  return 1;
}

static void strip_quotes(char *v) {
  size_t n = strlen(v);
  if (n >= 2 && ((v[0] == '"' && v[n - 1] == '"') || (v[0] == '\'' && v[n - 1] == '\''))) {
    memmove(v, v + 1, n - 2);
    v[n - 2] = '\0';
  }
}

static void lowercase(char *s) {
  for (; *s; s++)
    *s = (char)tolower((unsigned char)*s);
}

static int parse_section(char *start, char *section) {
  char *end = find_char_or_comment(start + 1, ']');
  if (*end != ']')
    return -1;
  *end = '\0';
  char *name = rstrip(skip_space(start + 1));
  lowercase(name);
  copy_bounded(section, name, INI_MAX_SECTION);
  return 0;
}

static int parse_pair(char *start, const char *section, ini_handler h, void *user) {
  char *sep = find_char_or_comment(start, '=');
  if (*sep != '=')
    sep = find_char_or_comment(start, ':');
  if (*sep != '=' && *sep != ':')
    return -1;
  *sep = '\0';
  char *key = rstrip(start);
  char *value = skip_space(sep + 1);
  char *cend = find_char_or_comment(value, '\0');
  *cend = '\0';
  rstrip(value);
  strip_quotes(value);
  lowercase(key);
  return h(user, section, key, value) ? 0 : -1;
}

/* Parses an INI document; returns 0 or the first line with an error. */
int ini_parse(const char *text, size_t len, ini_handler h, void *user) {
  ini_reader r = {text, text + len, 0};
  char line[INI_MAX_LINE];
  char section[INI_MAX_SECTION] = "";
  int error = 0;
  while (read_line(&r, line, sizeof line)) {
    char *s = skip_space(line);
    if (r.line == 1 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
        (unsigned char)s[2] == 0xBF)
      s += 3; /* UTF-8 byte-order mark */
    if (*s == '\0' || is_comment_start(*s))
      continue;
    int rc = *s == '[' ? parse_section(s, section) : parse_pair(s, section, h, user);
    if (rc != 0 && !error)
      error = r.line;
  }
  return error;
}

static int parse_bool_word(const char *v) {
  static const char *truthy[] = {"1", "yes", "true", "on"};
  static const char *falsy[] = {"0", "no", "false", "off"};
  for (size_t i = 0; i < 4; i++) {
    if (strcmp(v, truthy[i]) == 0)
      return 1;
    if (strcmp(v, falsy[i]) == 0)
      return 0;
  }
  return -1;
}

int ini_get_bool(const char *value, int fallback) {
  char buf[16];
  copy_bounded(buf, value, sizeof buf);
  lowercase(buf);
  int b = parse_bool_word(rstrip(skip_space(buf)));
  return b < 0 ? fallback : b;
}

long ini_get_int(const char *value, long fallback) {
  const char *p = value;
  int neg = 0;
  long v = 0;
  while (is_space(*p))
    p++;
  if (*p == '-' || *p == '+')
    neg = *p++ == '-';
  if (!isdigit((unsigned char)*p))
    return fallback;
  while (isdigit((unsigned char)*p))
    v = v * 10 + (*p++ - '0');
  return neg ? -v : v;
}
