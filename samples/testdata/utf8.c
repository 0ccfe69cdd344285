/* utf8.c - UTF-8 decoding, validation, encoding and code-point counting. */
#include <stddef.h>
#include <stdint.h>

#define UTF8_INVALID 0xFFFDu

static int is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }
static int is_surrogate(uint32_t cp) { return cp >= 0xD800 && cp <= 0xDFFF; }
static int in_range(uint32_t cp) { return cp <= 0x10FFFF && !is_surrogate(cp); }

static int sequence_length(unsigned char lead) {
  if (lead < 0x80)
    return 1;
  if ((lead & 0xE0) == 0xC0)
    return 2;
  if ((lead & 0xF0) == 0xE0)
    return 3;
  if ((lead & 0xF8) == 0xF0)
    return 4;
  return 0;
}

static uint32_t lead_bits(unsigned char lead, int len) {
  static const unsigned char masks[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  return lead & masks[len];
}

static uint32_t min_for_length(int len) {
  static const uint32_t mins[5] = {0, 0, 0x80, 0x800, 0x10000};
  return mins[len];
}

/* Decodes one code point from s[0..n); stores its length in *len. */
uint32_t utf8_decode(const unsigned char *s, size_t n, int *len) {
  int l = sequence_length(s[0]);
  if (l == 0 || (size_t)l > n) {
    *len = 1;
    return UTF8_INVALID;
  }
  uint32_t cp = lead_bits(s[0], l);
  for (int i = 1; i < l; i++) {
    if (!is_continuation(s[i])) {
      *len = i;
      return UTF8_INVALID;
    }
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  *len = l;
  if (cp < min_for_length(l) || !in_range(cp))
    return UTF8_INVALID;
  return cp;
}

static int encoded_length(uint32_t cp) {
  if (cp < 0x80)
    return 1;
  if (cp < 0x800)
    return 2;
  if (cp < 0x10000)
    return 3;
  return 4;
}

static unsigned char continuation_byte(uint32_t cp, int shift) {
  return (unsigned char)(0x80 | ((cp >> shift) & 0x3F));
}

int utf8_encode(uint32_t cp, unsigned char *out) {
  if (!in_range(cp))
    cp = UTF8_INVALID;
  int l = encoded_length(cp);
  switch (l) {
  case 1:
    out[0] = (unsigned char)cp;
    break;
  case 2:
    out[0] = (unsigned char)(0xC0 | (cp >> 6));
    out[1] = continuation_byte(cp, 0);
    break;
  case 3:
    out[0] = (unsigned char)(0xE0 | (cp >> 12));
    out[1] = continuation_byte(cp, 6);
    out[2] = continuation_byte(cp, 0);
    break;
  default:
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = continuation_byte(cp, 12);
    out[2] = continuation_byte(cp, 6);
    out[3] = continuation_byte(cp, 0);
    break;
  }
  return l;
}

int utf8_valid(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    int l;
    if (utf8_decode(s + i, n - i, &l) == UTF8_INVALID)
      return 0;
    i += (size_t)l;
  }
  return 1;
}

size_t utf8_length(const unsigned char *s, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    if (!is_continuation(s[i]))
      count++;
  return count;
}

static int is_ascii_upper(uint32_t cp) { return cp >= 'A' && cp <= 'Z'; }
static int is_latin1_upper(uint32_t cp) { return cp >= 0xC0 && cp <= 0xDE && cp != 0xD7; }
static uint32_t simple_fold(uint32_t cp) {
  if (is_ascii_upper(cp) || is_latin1_upper(cp))
    return cp + 32;
  return cp;
}

/* Case-folds Latin-1 letters in place-compatible fashion; returns bytes written. */
size_t utf8_fold(const unsigned char *s, size_t n, unsigned char *out) {
  size_t i = 0, o = 0;
  while (i < n) {
    int l;
    uint32_t cp = utf8_decode(s + i, n - i, &l);
    o += (size_t)utf8_encode(simple_fold(cp), out + o);
    i += (size_t)l;
  }
  return o;
}
