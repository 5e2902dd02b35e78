//! Plain-text tables for the `ls` and `show` commands: a header row in capitals, columns
//! padded to their widest cell, the last column unpadded.

/// The table as text (one line per row, each ending in a newline).
pub fn render(head: &[&str], rows: &[Vec<String>]) -> String {
    let n = head.len();
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(n) {
            width[i] = width[i].max(printable(cell).chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = String>| {
        let mut out = String::new();
        for (i, cell) in cells.enumerate().take(n) {
            if i + 1 == n {
                out.push_str(&cell);
            } else {
                let pad = width[i].saturating_sub(cell.chars().count());
                out.push_str(&cell);
                out.push_str(&" ".repeat(pad + 2));
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(&mut head.iter().map(|h| h.to_uppercase()));
    for row in rows {
        out.push_str(&line(&mut row.iter().map(|c| printable(c))));
    }
    out
}

/// `text` with its control characters (from a file's names: escape sequences, newlines) shown
/// as `?`, so that what a file holds never drives the terminal or breaks a table's lines.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Prints [`render`]'s table.
pub fn print(head: &[&str], rows: &[Vec<String>]) {
    print!("{}", render(head, rows));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_in_cells_never_reach_the_terminal() {
        let t = render(
            &["a", "b"],
            &[vec!["x\u{1b}[2J".into(), "new\nline".into()]],
        );
        assert!(!t.contains('\u{1b}'), "{t:?}");
        assert_eq!(t.lines().count(), 2, "{t:?}");
        assert!(t.contains("x?[2J") && t.contains("new?line"), "{t:?}");
    }

    #[test]
    fn columns_line_up_under_a_capital_header() {
        let t = render(
            &["file", "size"],
            &[
                vec!["a.kwcap".into(), "1 KiB".into()],
                vec!["b".into(), "".into()],
            ],
        );
        assert_eq!(t, "FILE     SIZE\na.kwcap  1 KiB\nb\n");
    }
}
