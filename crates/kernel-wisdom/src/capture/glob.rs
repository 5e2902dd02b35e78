//! A tiny glob matcher for tuning keys: `*` matches any run of characters (also none), `?`
//! exactly one character; everything else matches itself.

/// Whether `text` matches the glob `pattern` (`*` and `?`, no escapes, no classes).
///
/// Linear in practice: backtracks only to the last `*` (the classic two-pointer algorithm).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None; // (pattern index after `*`, text index)
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                pi += 1;
                star = Some((pi, ti));
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn stars_and_question_marks() {
        assert!(glob_match("*", ""));
        assert!(glob_match("*", "vector_add"));
        assert!(glob_match("vector_*", "vector_add"));
        assert!(glob_match("*_add", "vector_add"));
        assert!(glob_match("v?ctor*d", "vector_add"));
        assert!(glob_match("*a*d*", "vector_add"));
        assert!(glob_match("stencil2d", "stencil2d"));
        assert!(!glob_match("stencil2d", "stencil2"));
        assert!(!glob_match("stencil?", "stencil"));
        assert!(!glob_match("*x*", "vector_add"));
        assert!(!glob_match("vector", "vector_add"));
        assert!(glob_match("ü?", "üb"));
    }
}
