//! Tokens of the expression language.

use super::ParseError;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Int(u128),
    Float(f64),
    Str(String),
    Ident(String),
    Sym(&'static str),
    End,
}

/// Two-character symbols first, so that `<<` is not read as `<` `<`.
const SYMBOLS: [&str; 32] = [
    "**", "//", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "+", "-", "*", "/", "%", "<", ">",
    "!", "(", ")", "[", "]", "{", "}", ",", ".", "?", ":", "&", "|", "^", "~",
];

pub(crate) struct Lexer {
    pub(crate) toks: Vec<(Tok, usize)>,
}

pub(crate) fn lex(text: &str) -> Result<Lexer, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let err = |col: usize, m: String| ParseError {
        column: col + 1,
        message: m,
        text: text.to_string(),
    };
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        // Python's `0x1f`, `0o17`, `0b101` (underscores allowed between digits).
        let radix = match (c, chars.get(i + 1)) {
            ('0', Some('x' | 'X')) => Some(16),
            ('0', Some('o' | 'O')) => Some(8),
            ('0', Some('b' | 'B')) => Some(2),
            _ => None,
        };
        if let Some(radix) = radix {
            i += 2;
            let mut digits = String::new();
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                if chars[i] != '_' {
                    digits.push(chars[i]);
                }
                i += 1;
            }
            let written: String = chars[start..i].iter().collect();
            // Python's rule: an underscore only between digits, or after the prefix.
            let body = &written[2..];
            let body = body.strip_prefix('_').unwrap_or(body);
            if body.split('_').any(str::is_empty) {
                return Err(err(start, format!("malformed number `{written}`")));
            }
            let value = u128::from_str_radix(&digits, radix).map_err(|_| {
                err(
                    start,
                    if digits.chars().all(|d| d.is_digit(radix)) && !digits.is_empty() {
                        format!("integer `{written}` is too large")
                    } else {
                        format!("malformed number `{written}`")
                    },
                )
            })?;
            toks.push((Tok::Int(value), start));
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let mut s = String::new();
            let mut is_float = false;
            while i < chars.len() {
                let d = chars[i];
                if d.is_ascii_digit() {
                    s.push(d);
                } else if d == '_' {
                    // Python's rule: an underscore only between two digits (`1_000`).
                    let between = i > start
                        && chars[i - 1].is_ascii_digit()
                        && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
                    if !between {
                        return Err(err(
                            start,
                            "malformed number: an underscore must stand between digits".into(),
                        ));
                    }
                } else if d == '.' && !is_float && !s.contains('e') {
                    is_float = true;
                    s.push(d);
                } else if (d == 'e' || d == 'E') && !s.contains('e') {
                    is_float = true;
                    s.push('e');
                    if matches!(chars.get(i + 1), Some('+') | Some('-')) {
                        i += 1;
                        s.push(chars[i]);
                    }
                } else {
                    break;
                }
                i += 1;
            }
            let tok = if is_float {
                let f: f64 = s
                    .parse()
                    .map_err(|_| err(start, format!("malformed number `{s}`")))?;
                if !f.is_finite() {
                    // JSON (captures, definitions) cannot hold it: refused here.
                    return Err(err(
                        start,
                        format!(
                            "number `{s}` is beyond the largest float (infinity cannot be written)"
                        ),
                    ));
                }
                Tok::Float(f)
            } else {
                Tok::Int(
                    s.parse()
                        .map_err(|_| err(start, format!("integer `{s}` is too large")))?,
                )
            };
            toks.push((tok, start));
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            toks.push((Tok::Ident(chars[start..i].iter().collect()), start));
            continue;
        }
        if c == '"' || c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(err(start, "unterminated string".into())),
                    Some(&q) if q == c => break,
                    Some('\\') => {
                        i += 1;
                        match chars.get(i) {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some('r') => s.push('\r'),
                            Some('0') => s.push('\0'),
                            Some(&o @ ('\\' | '"' | '\'')) => s.push(o),
                            // `\u{1f}`: how strings print (Rust's escapes), so they read back.
                            Some('u') if chars.get(i + 1) == Some(&'{') => {
                                let close = chars[i..]
                                    .iter()
                                    .position(|&ch| ch == '}')
                                    .map(|p| i + p)
                                    .filter(|&p| p > i + 2 && p <= i + 8);
                                let ch = close.and_then(|p| {
                                    let hex: String = chars[i + 2..p].iter().collect();
                                    u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                                });
                                match (ch, close) {
                                    (Some(ch), Some(p)) => {
                                        s.push(ch);
                                        i = p;
                                    }
                                    _ => {
                                        return Err(err(i, "bad \\u{...} escape in string".into()))
                                    }
                                }
                            }
                            _ => return Err(err(i, "unknown escape in string".into())),
                        }
                    }
                    Some(&o) => s.push(o),
                }
                i += 1;
            }
            i += 1;
            toks.push((Tok::Str(s), start));
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
            Some(s) => {
                toks.push((Tok::Sym(s), start));
                i += s.chars().count();
            }
            None => return Err(err(start, format!("unexpected character `{c}`"))),
        }
    }
    toks.push((Tok::End, chars.len()));
    Ok(Lexer { toks })
}
