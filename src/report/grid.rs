//! The tables every view returns, and the column aligner that lays them
//! out on a terminal. Each format renders the same [`Block`]s: the
//! terminal here ([`text`]), Markdown and HTML in their modules.

/// One table of a view: a title line, lines that introduce it, the header
/// and the rows (the first two columns are names, the others figures:
/// right-aligned in every format), and the lines under it.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub title: Option<String>,
    /// Lines between the title and the table (what each column is).
    pub lead: Vec<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Lines under the table (an empty one is a blank line).
    pub notes: Vec<String>,
    /// Spaces before each line of the table on a terminal.
    pub indent: usize,
    /// A blank line after it on a terminal.
    pub gap: bool,
}

impl Table {
    /// A table with `header`, its rows to come.
    pub fn new(header: Vec<String>) -> Table {
        Table {
            header,
            ..Table::default()
        }
    }

    pub fn titled(mut self, title: impl Into<String>) -> Table {
        self.title = Some(title.into());
        self
    }

    /// Followed by a blank line on a terminal.
    pub fn gap(mut self) -> Table {
        self.gap = true;
        self
    }

    /// The terminal text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for l in self.title.iter().chain(&self.lead) {
            out.push_str(l);
            out.push('\n');
        }
        let all: Vec<Vec<String>> = std::iter::once(self.header.clone())
            .chain(self.rows.iter().cloned())
            .collect();
        for l in grid(&all).lines() {
            out.push_str(&" ".repeat(self.indent));
            out.push_str(l);
            out.push('\n');
        }
        for l in &self.notes {
            out.push_str(l);
            out.push('\n');
        }
        if self.gap {
            out.push('\n');
        }
        out
    }
}

/// What a view shows: tables and lines of text between them.
#[derive(Debug, Clone)]
pub enum Block {
    Table(Table),
    /// Lines (an empty one is a blank line).
    Text(Vec<String>),
}

impl Block {
    /// Lines of text from a string of them.
    pub fn lines(s: &str) -> Block {
        Block::Text(s.lines().map(str::to_string).collect())
    }
}

/// The lines of a paragraph in a page format: the text lines without
/// their terminal indentation, blank ones dropped; None when none is left.
pub fn prose(lines: &[String]) -> Option<Vec<&str>> {
    let kept: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    (!kept.is_empty()).then_some(kept)
}

/// The terminal text of `blocks`.
pub fn text(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        match b {
            Block::Table(t) => out.push_str(&t.text()),
            Block::Text(lines) => {
                for l in lines {
                    out.push_str(l);
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// Right-align `cells` into columns separated by two spaces (the first
/// two columns left-aligned).
pub fn grid(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut w = vec![0; cols];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < 2 {
                    format!("{:<width$}", c, width = w[i])
                } else {
                    format!("{:>width$}", c, width = w[i])
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}
