; Smoke test for dwcc: a static helper called from an exported function.
target triple = "x86_64-unknown-linux-gnu"

define internal i32 @square(i32 %x) {
  %r = mul i32 %x, %x
  ret i32 %r
}

define i32 @sum_of_squares(i32 %a, i32 %b) {
  %sa = call i32 @square(i32 %a)
  %sb = call i32 @square(i32 %b)
  %s = add i32 %sa, %sb
  ret i32 %s
}
