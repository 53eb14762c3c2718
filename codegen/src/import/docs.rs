//! CRD descriptions as doc comments that rustdoc and clippy accept without a warning.
//!
//! Descriptions are Go comments, not Markdown: `[]string`, `<name>`, bare URLs and
//! indented examples are common, and as Markdown they are broken intra-doc links,
//! unclosed HTML tags, bare-URL warnings and doctests. A description with any of those is
//! wrapped, verbatim, in a ```` ```text ```` block (longer fences when it holds
//! backticks itself); any other is written line by line, its paragraphs apart, which the
//! CRD generator (`crd::schema::description`) reads back with the lines of a paragraph
//! joined by spaces. Tabs become four spaces (clippy's `tabs_in_doc_comments`), and a line
//! that would read as a marker (`+optional`) gets a leading backslash.

/// Whether rustdoc could read `text` as something other than prose.
fn needs_fence(lines: &[&str]) -> bool {
    lines.iter().any(|l| {
        l.contains(['[', ']', '<', '>'])
            || l.contains("http://")
            || l.contains("https://")
            || l.starts_with(char::is_whitespace)
            || l.trim_start().starts_with("```")
            || l.trim_start().starts_with("~~~")
    })
}

/// The longest run of backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in text.chars() {
        if c == '`' {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// A line that the marker reader would take for a marker, escaped.
fn unmark(line: &str) -> String {
    if crate::markers::parse_marker_line(line).is_some() {
        let indent = line.len() - line.trim_start().len();
        format!("{}\\{}", &line[..indent], &line[indent..])
    } else {
        line.to_owned()
    }
}

/// The doc lines (each the text of one `///` comment, with its leading space) for a
/// description.
pub fn doc_lines(description: &str) -> Vec<String> {
    let text = description.replace('\t', "    ").replace('\r', "");
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut out = Vec::new();
    if needs_fence(&lines) {
        let fence = "`".repeat(3.max(longest_backtick_run(&text) + 1));
        out.push(format!(" {fence}text"));
        // Leading and trailing blank lines carry nothing.
        let first = lines.iter().position(|l| !l.is_empty()).unwrap_or(0);
        let last = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        for line in lines.get(first..last).unwrap_or_default() {
            if line.is_empty() {
                out.push(String::new());
            } else {
                out.push(format!(" {}", unmark(line)));
            }
        }
        out.push(format!(" {fence}"));
    } else {
        // The lines of a paragraph stay together (rustdoc joins them, as the CRD
        // generator does); a blank line keeps paragraphs apart, and a line after a list
        // item or quote that is not one itself starts a paragraph (clippy's
        // `doc_lazy_continuation`).
        let mut previous: Option<&str> = None;
        for line in &lines {
            let line = line.trim();
            if line.is_empty() {
                if previous.is_some() {
                    previous = Some("");
                }
                continue;
            }
            match previous {
                Some("") => out.push(String::new()),
                Some(p) if starts_block(p) && !starts_block(line) => out.push(String::new()),
                _ => {}
            }
            out.push(format!(" {}", unmark(line)));
            previous = Some(line);
        }
    }
    out
}

/// Whether Markdown reads `line` as a list item or a block quote.
fn starts_block(line: &str) -> bool {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    ["- ", "* ", "+ ", "> "].iter().any(|p| line.starts_with(p))
        || (digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_back(lines: &[String]) -> Option<String> {
        let attrs: Vec<syn::Attribute> = lines
            .iter()
            .map(|l| syn::parse_quote!(#[doc = #l]))
            .collect();
        crate::crd::schema::description(&attrs)
    }

    #[test]
    fn prose_keeps_its_lines_and_paragraphs() {
        let d = "Duration is the requested\nlifetime.\n\nIf unset, 90 days.";
        let lines = doc_lines(d);
        assert_eq!(
            lines,
            [
                " Duration is the requested",
                " lifetime.",
                "",
                " If unset, 90 days."
            ]
        );
        assert_eq!(
            read_back(&lines).as_deref(),
            Some("Duration is the requested lifetime.\nIf unset, 90 days.")
        );
    }

    #[test]
    fn a_line_after_a_list_starts_a_paragraph() {
        let lines = doc_lines("Values:\n* a\n- b\n1. c\nafter");
        assert_eq!(lines, [" Values:", " * a", " - b", " 1. c", "", " after"]);
    }

    #[test]
    fn markdown_hazards_are_fenced_verbatim() {
        let d = "Use `a` or ```b```.\nSee https://example.com and []string <name>.\n    indented";
        let lines = doc_lines(d);
        assert_eq!(lines[0], " ````text");
        assert_eq!(lines[3], "     indented");
        assert_eq!(lines.last().map(String::as_str), Some(" ````"));
    }

    #[test]
    fn marker_like_lines_and_tabs_are_escaped() {
        let lines = doc_lines("+optional\nx\ty");
        assert_eq!(lines, [" \\+optional", " x    y"]);
        assert_eq!(read_back(&lines).as_deref(), Some("\\+optional x    y"));
    }
}
