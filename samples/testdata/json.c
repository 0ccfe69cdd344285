/* json.c - JSON tokenizer: numbers, strings with escapes, literals and punctuation. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef enum { TOK_EOF, TOK_ERROR, TOK_PUNCT, TOK_STRING, TOK_NUMBER, TOK_TRUE, TOK_FALSE, TOK_NULL } tok_kind;

typedef struct {
  tok_kind kind;
  char punct;
  double number;
  char *str;  /* decoded string; points into the lexer's buffer */
  size_t len;
} token;

typedef struct {
  const char *src, *end;
  char buf[512];
  int line, col;
} lexer;

static int at_end(const lexer *lx) { return lx->src >= lx->end; }
static char peek(const lexer *lx) { return at_end(lx) ? '\0' : *lx->src; }
static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_punct(char c) { return c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ','; }

static char advance(lexer *lx) {
  char c = *lx->src++;
  if (c == '\n') {
    lx->line++;
    lx->col = 1;
  } else {
    lx->col++;
  }
  return c;
}

static int accept(lexer *lx, char c) {
  if (peek(lx) != c)
    return 0;
  advance(lx);
  return 1;
}

static void skip_ws(lexer *lx) {
  while (!at_end(lx) && is_ws(peek(lx)))
    advance(lx);
}

static token make(tok_kind k) {
  token t = {k, 0, 0.0, NULL, 0};
  return t;
}

static token error_token(void) { return make(TOK_ERROR); }

static int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static int read_hex4(lexer *lx, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    int h = at_end(lx) ? -1 : hex_value(advance(lx));
    if (h < 0)
      return 0;
    v = (v << 4) | (uint32_t)h;
  }
  *out = v;
  return 1;
}

static size_t put_utf8(char *dst, uint32_t cp) {
  if (cp < 0x80) {
    dst[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    dst[0] = (char)(0xC0 | (cp >> 6));
    dst[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  dst[0] = (char)(0xE0 | (cp >> 12));
  dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
  dst[2] = (char)(0x80 | (cp & 0x3F));
  return 3;
}

static int unescape(char e, char *out) {
  switch (e) {
  case '"': case '\\': case '/': *out = e; return 1;
  case 'b': *out = '\b'; return 1;
  case 'f': *out = '\f'; return 1;
  case 'n': *out = '\n'; return 1;
  case 'r': *out = '\r'; return 1;
  case 't': *out = '\t'; return 1;
  default: return 0;
  }
}

static token lex_string(lexer *lx) {
  size_t n = 0;
  advance(lx); /* opening quote */
  while (!at_end(lx) && peek(lx) != '"') {
    if (n + 4 >= sizeof lx->buf)
      return error_token();
    char c = advance(lx);
    if (c != '\\') {
      lx->buf[n++] = c;
      continue;
    }
    if (at_end(lx))
      return error_token();
    char e = advance(lx);
    if (e == 'u') {
      uint32_t cp;
      if (!read_hex4(lx, &cp))
        return error_token();
      n += put_utf8(lx->buf + n, cp);
    } else if (!unescape(e, &lx->buf[n++])) {
      return error_token();
    }
  }
  if (!accept(lx, '"'))
    return error_token();
  lx->buf[n] = '\0';
  token t = make(TOK_STRING);
  t.str = lx->buf;
  t.len = n;
  return t;
}

static int copy_digits(lexer *lx, char *dst, size_t *n, size_t cap) {
  int any = 0;
  while (is_digit(peek(lx)) && *n + 1 < cap) {
    dst[(*n)++] = advance(lx);
    any = 1;
  }
  return any;
}

static token lex_number(lexer *lx) {
  char tmp[64];
  size_t n = 0;
  if (peek(lx) == '-')
    tmp[n++] = advance(lx);
  if (!copy_digits(lx, tmp, &n, sizeof tmp))
    return error_token();
  if (peek(lx) == '.') {
    tmp[n++] = advance(lx);
    if (!copy_digits(lx, tmp, &n, sizeof tmp))
      return error_token();
  }
  if (peek(lx) == 'e' || peek(lx) == 'E') {
    tmp[n++] = advance(lx);
    if (peek(lx) == '+' || peek(lx) == '-')
      tmp[n++] = advance(lx);
    if (!copy_digits(lx, tmp, &n, sizeof tmp))
      return error_token();
  }
  tmp[n] = '\0';
  token t = make(TOK_NUMBER);
  t.number = strtod(tmp, NULL);
  return t;
}

static int match_word(lexer *lx, const char *w) {
  const char *p = lx->src;
  for (; *w; w++, p++)
    if (p >= lx->end || *p != *w)
      return 0;
  while (lx->src < p)
    advance(lx);
  return 1;
}

void json_lexer_init(lexer *lx, const char *src, size_t len) {
  lx->src = src;
  lx->end = src + len;
  lx->line = lx->col = 1;
}

token json_next(lexer *lx) {
  skip_ws(lx);
  if (at_end(lx))
    return make(TOK_EOF);
  char c = peek(lx);
  if (is_punct(c)) {
    token t = make(TOK_PUNCT);
    t.punct = advance(lx);
    return t;
  }
  if (c == '"')
    return lex_string(lx);
  if (c == '-' || is_digit(c))
    return lex_number(lx);
  if (match_word(lx, "true"))
    return make(TOK_TRUE);
  if (match_word(lx, "false"))
    return make(TOK_FALSE);
  if (match_word(lx, "null"))
    return make(TOK_NULL);
  return error_token();
}
