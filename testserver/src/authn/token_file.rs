//! `--token-auth-file` (kube-apiserver's
//! `staging/src/k8s.io/apiserver/plugin/pkg/authenticator/token/tokenfile/tokenfile.go`):
//! a CSV file of static bearer tokens, one a row:
//!
//! ```text
//! token,user,uid,"group1,group2"
//! ```
//!
//! At least three columns (token, user name, uid); the fourth, optional, is the user's
//! groups separated by commas (quoted, as it holds commas). Blank lines are skipped, as
//! Go's `encoding/csv` skips them; leading spaces of a field are trimmed
//! (`TrimLeadingSpace`); a row with an empty token is skipped (kube warns); a token that
//! repeats replaces the earlier row's. A malformed row is an error naming the file and
//! line.

use std::path::Path;

use super::{AuthnError, UserInfo};

/// Reads a token file: its tokens and users, in file order.
pub(crate) fn read(path: &Path) -> Result<Vec<(String, UserInfo)>, AuthnError> {
    let text = std::fs::read_to_string(path).map_err(|source| AuthnError::Read {
        path: path.display().to_string(),
        source,
    })?;
    parse(&path.display().to_string(), &text)
}

/// Parses the text of a token file named `file` (the name goes into errors).
pub(crate) fn parse(file: &str, text: &str) -> Result<Vec<(String, UserInfo)>, AuthnError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| AuthnError::TokenFile {
            file: file.to_string(),
            line: line_no,
            message,
        };
        let record = split_record(line).map_err(|m| bad(m.to_string()))?;
        if record.len() < 3 {
            return Err(bad(format!(
                "must have at least 3 columns (token, user name, user uid), found {}",
                record.len()
            )));
        }
        if record[0].is_empty() {
            tracing::warn!(file, line = line_no, "empty token in token file");
            continue;
        }
        let mut user = UserInfo::new(record[1].clone(), Vec::<String>::new());
        user.uid = record[2].clone();
        if let Some(groups) = record.get(3) {
            user.groups = groups.split(',').map(str::to_string).collect();
        }
        if rows
            .iter()
            .any(|(t, _): &(String, UserInfo)| t == &record[0])
        {
            tracing::warn!(file, line = line_no, "duplicate token in token file");
            rows.retain(|(t, _)| t != &record[0]);
        }
        rows.push((record[0].clone(), user));
    }
    Ok(rows)
}

/// One CSV record (Go's `encoding/csv` with `TrimLeadingSpace`): comma-separated fields,
/// a field in double quotes may hold commas, and `""` inside quotes is one quote.
fn split_record(line: &str) -> Result<Vec<String>, &'static str> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    None => return Err("extraneous or missing \" in quoted-field"),
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => fields.push(field),
                Some(_) => return Err("extraneous or missing \" in quoted-field"),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field);
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some('"') => return Err("bare \" in non-quoted-field"),
                    Some(c) => field.push(c),
                }
            }
            fields.push(field);
        }
    }
}

#[cfg(test)]
mod tests {
    //! After kube-apiserver's
    //! `staging/src/k8s.io/apiserver/plugin/pkg/authenticator/token/tokenfile/tokenfile_test.go`.

    use super::*;

    #[test]
    fn rows_with_and_without_groups() {
        let rows = parse(
            "tokens.csv",
            "token1,user1,uid1\n\ntoken2,user2,uid2\ntoken3,user3,uid3,\"group1,group2\"\n  token4, user4,uid4,\"group2\"\ntoken5,user5,uid5,group5\ntoken6,user6,uid6,group5,otherdata\n",
        )
        .expect("parses");
        let find = |t: &str| {
            rows.iter()
                .find(|(tok, _)| tok == t)
                .map(|(_, u)| u.clone())
        };
        assert_eq!(rows.len(), 6);
        let u1 = find("token1").expect("token1");
        assert_eq!((u1.name.as_str(), u1.uid.as_str()), ("user1", "uid1"));
        assert!(u1.groups.is_empty());
        assert_eq!(find("token3").expect("token3").groups, ["group1", "group2"]);
        assert_eq!(find("token4").expect("token4").name, "user4");
        assert_eq!(find("token4").expect("token4").groups, ["group2"]);
        assert_eq!(find("token5").expect("token5").groups, ["group5"]);
        assert_eq!(find("token6").expect("token6").groups, ["group5"]);
    }

    #[test]
    fn too_few_columns_names_the_file_and_line() {
        let err = parse("tokens.csv", "token1,user1,uid1\n\ntoken2,user2\n").expect_err("bad");
        assert_eq!(
            err.to_string(),
            "tokens.csv:3: must have at least 3 columns (token, user name, user uid), found 2"
        );
        let err = parse("t.csv", "a,b,\"c\n").expect_err("bad quote");
        assert!(err.to_string().starts_with("t.csv:1: "), "{err}");
    }

    #[test]
    fn empty_tokens_are_skipped_and_duplicates_replace() {
        let rows = parse("t.csv", ",user0,uid0\nt,a,1\nt,b,2\n").expect("parses");
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].1.name, "b");
    }

    #[test]
    fn a_missing_file_is_an_error() {
        let err = read(Path::new("/nonexistent/tokens.csv")).expect_err("missing");
        assert!(err.to_string().contains("/nonexistent/tokens.csv"), "{err}");
    }
}
