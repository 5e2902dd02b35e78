//! Plain-text tables for the `ls` and `show` commands: a header row in capitals, columns
//! padded to their widest cell, the last column unpadded. A row with fewer cells than the
//! header (a file that cannot be read: its name and why) ends in a cell that runs on, and
//! that cell sets no column's width.

/// The table as text (one line per row, each ending in a newline).
pub fn render(head: &[&str], rows: &[Vec<String>]) -> String {
    let n = head.len();
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        // A short row's last cell runs on past the columns (see above).
        let sized = if row.len() < n {
            row.len().saturating_sub(1)
        } else {
            n
        };
        for (i, cell) in row.iter().enumerate().take(sized) {
            width[i] = width[i].max(printable(cell).chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = String>, short: bool, len: usize| {
        let mut out = String::new();
        for (i, cell) in cells.enumerate().take(n) {
            if i + 1 == n || (short && i + 1 == len) {
                out.push_str(&cell);
            } else {
                let pad = width[i].saturating_sub(cell.chars().count());
                out.push_str(&cell);
                out.push_str(&" ".repeat(pad + 2));
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(&mut head.iter().map(|h| h.to_uppercase()), false, n);
    for row in rows {
        out.push_str(&line(
            &mut row.iter().map(|c| printable(c)),
            row.len() < n,
            row.len(),
        ));
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

    #[test]
    fn a_short_rows_last_cell_runs_on_without_widening_its_column() {
        let t = render(
            &["file", "key", "size"],
            &[
                vec!["a.json".into(), "k".into(), "1 KiB".into()],
                vec!["bad.json".into(), "INVALID: a long reason".into()],
            ],
        );
        assert_eq!(
            t,
            "FILE      KEY  SIZE\na.json    k    1 KiB\nbad.json  INVALID: a long reason\n"
        );
    }
}
