//! The report page: one HTML file with its style inline and its figures as inline SVG (no
//! script, no link to anything outside the file).

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:1400px;color:#222}\
h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #ccc;margin-top:2em}\
h3{font-size:1.1em}table{border-collapse:collapse;margin:0.5em 0}\
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;font-size:0.9em}\
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}\
figure.kw-fig{display:inline-block;margin:0.5em;vertical-align:top}\
figcaption{font-size:0.85em;color:#555;max-width:640px}\
p.note{color:#555;font-size:0.9em}code{background:#f6f6f6;padding:0 3px}\
span.swatch{display:inline-block;width:0.9em;height:0.9em;vertical-align:middle;margin-right:4px}";

/// A report page being written.
pub struct Page {
    body: String,
    toc: Vec<(String, String)>,
    figures: usize,
}

impl Page {
    /// An empty page.
    pub fn new() -> Page {
        Page {
            body: String::new(),
            toc: Vec::new(),
            figures: 0,
        }
    }

    /// Starts a section (listed in the contents).
    pub fn section(&mut self, title: &str) {
        let id = format!("s{}", self.toc.len() + 1);
        self.body
            .push_str(&format!("<h2 id=\"{id}\">{}</h2>\n", escape(title)));
        self.toc.push((id, title.to_string()));
    }

    /// A sub-heading.
    pub fn heading(&mut self, title: &str) {
        self.body.push_str(&format!("<h3>{}</h3>\n", escape(title)));
    }

    /// A paragraph of plain text.
    pub fn para(&mut self, text: &str) {
        self.body.push_str(&format!("<p>{}</p>\n", escape(text)));
    }

    /// A note (smaller, grey).
    pub fn note(&mut self, text: &str) {
        self.body
            .push_str(&format!("<p class=\"note\">{}</p>\n", escape(text)));
    }

    /// A figure: SVG text from [`super::svg`] and its caption.
    pub fn figure(&mut self, svg: &str, caption: &str) {
        self.figures += 1;
        self.body.push_str(&format!(
            "<figure class=\"kw-fig\" id=\"fig{}\">{svg}<figcaption>{}</figcaption></figure>\n",
            self.figures,
            escape(caption)
        ));
    }

    /// A table; cells that parse as numbers are right-aligned. Cells are plain text, except
    /// that a cell starting with `\u{1}` is HTML written by this module's callers (a colour
    /// swatch).
    pub fn table(&mut self, head: &[&str], rows: &[Vec<String>]) {
        let mut t = String::from("<table><tr>");
        for h in head {
            t.push_str(&format!("<th>{}</th>", escape(h)));
        }
        t.push_str("</tr>\n");
        for row in rows {
            t.push_str("<tr>");
            for cell in row {
                if let Some(html) = cell.strip_prefix('\u{1}') {
                    t.push_str(&format!("<td>{html}</td>"));
                } else if cell.trim_end_matches(['x', '%']).parse::<f64>().is_ok() {
                    t.push_str(&format!("<td class=\"n\">{}</td>", escape(cell)));
                } else {
                    t.push_str(&format!("<td>{}</td>", escape(cell)));
                }
            }
            t.push_str("</tr>\n");
        }
        t.push_str("</table>\n");
        self.body.push_str(&t);
    }

    /// Figures added so far.
    pub fn figures(&self) -> usize {
        self.figures
    }

    /// The whole page.
    pub fn finish(self, title: &str, intro: &str) -> String {
        let mut toc = String::from("<ul>");
        for (id, t) in &self.toc {
            toc.push_str(&format!("<li><a href=\"#{id}\">{}</a></li>", escape(t)));
        }
        toc.push_str("</ul>");
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>{t}</title><style>{STYLE}</style></head>\n<body>\n<h1>{t}</h1>\n\
             <p class=\"note\">{}</p>\n{toc}\n{}</body></html>\n",
            escape(intro),
            self.body,
            t = escape(title),
        )
    }
}

/// A colour swatch and a label, as a table cell (see [`Page::table`]).
pub fn swatch(colour: &str, label: &str) -> String {
    format!(
        "\u{1}<span class=\"swatch\" style=\"background:{colour}\"></span>{}",
        escape(label)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_the_page_is_whole() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        let mut p = Page::new();
        p.section("Run <1>");
        p.table(&["k", "v"], &[vec!["x".into(), "1.5".into()]]);
        p.figure("<svg></svg>", "cap");
        assert_eq!(p.figures(), 1);
        let html = p.finish("T", "intro");
        assert!(html.contains("Run &lt;1&gt;"));
        assert!(html.contains("<td class=\"n\">1.5</td>"));
        assert!(html.ends_with("</html>\n"));
        assert!(!html.contains("<script"), "the page holds no script");
    }
}
