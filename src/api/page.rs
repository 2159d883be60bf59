//! Paging: the one rule every list follows, on a list sorted by its key.
//! A page starts after its token (the last key of the previous page),
//! holds at most `limit` items, and names the next token when more follow.
//! A negative `limit` is InvalidInput (13); `0` is an empty page (the
//! spec's limit is an inclusive upper bound, and Lance's own namespace
//! answers it so). Only the size of a page without a `limit` differs by
//! surface ([`Sizes`]).

use crate::error::{CatalogError, CatalogResult};

/// The size of a page that names no `limit`, and the largest one served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub default: Option<usize>,
    pub max: Option<usize>,
}

/// The spec's lists: everything without a `limit`, as Lance's own
/// namespace answers and as clients that never page expect.
pub const SPEC: Sizes = Sizes {
    default: None,
    max: None,
};

/// The control plane's lists: 100 without a `limit`, at most 1,000.
pub const CONTROL: Sizes = Sizes {
    default: Some(100),
    max: Some(1000),
};

/// How many items a page of `sizes` holds for `limit` (`None`: all).
pub fn size(limit: Option<i32>, sizes: Sizes) -> CatalogResult<Option<usize>> {
    let asked = match limit {
        Some(n) if n < 0 => {
            return Err(CatalogError::invalid(format!(
                "limit must be zero or positive, got {n}"
            )))
        }
        Some(n) => Some(n as usize),
        None => sizes.default,
    };
    Ok(match (asked, sizes.max) {
        (Some(n), Some(max)) => Some(n.min(max)),
        (None, Some(max)) => Some(max),
        (asked, None) => asked,
    })
}

/// One page of `sorted` keys after `token`, and the next token.
pub fn page(
    sorted: &[String],
    token: Option<&str>,
    limit: Option<i32>,
    sizes: Sizes,
) -> CatalogResult<(Vec<String>, Option<String>)> {
    let size = size(limit, sizes)?;
    let start = token
        .filter(|t| !t.is_empty())
        .map(|t| sorted.partition_point(|k| k.as_str() <= t))
        .unwrap_or(0);
    let rest = &sorted[start..];
    let taken: Vec<String> = rest
        .iter()
        .take(size.unwrap_or(usize::MAX))
        .cloned()
        .collect();
    let next = (rest.len() > taken.len())
        .then(|| taken.last().cloned())
        .flatten();
    Ok((taken, next))
}

/// One page of `items` (sorted by `key`) after `token`, and the next token.
pub fn page_items<T>(
    items: Vec<T>,
    key: impl Fn(&T) -> String,
    token: Option<&str>,
    limit: Option<i32>,
    sizes: Sizes,
) -> CatalogResult<(Vec<T>, Option<String>)> {
    let keys: Vec<String> = items.iter().map(&key).collect();
    let (taken, next) = page(&keys, token, limit, sizes)?;
    let first = token
        .filter(|t| !t.is_empty())
        .map(|t| keys.partition_point(|k| k.as_str() <= t))
        .unwrap_or(0);
    Ok((
        items.into_iter().skip(first).take(taken.len()).collect(),
        next,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("k{i:02}")).collect()
    }

    #[test]
    fn pages_follow_tokens_to_the_end() {
        let all = keys(5);
        let (a, t) = page(&all, None, Some(2), SPEC).unwrap();
        assert_eq!(
            (a, t.as_deref()),
            (vec!["k00".into(), "k01".into()], Some("k01"))
        );
        let (b, t) = page(&all, t.as_deref(), Some(2), SPEC).unwrap();
        assert_eq!((b.len(), t.as_deref()), (2, Some("k03")));
        let (c, t) = page(&all, t.as_deref(), Some(2), SPEC).unwrap();
        assert_eq!((c, t), (vec!["k04".to_string()], None));
    }

    #[test]
    fn one_limit_rule_sizes_by_surface() {
        let all = keys(150);
        assert_eq!(page(&all, None, None, SPEC).unwrap().0.len(), 150);
        let (p, t) = page(&all, None, None, CONTROL).unwrap();
        assert_eq!((p.len(), t.as_deref()), (100, Some("k99")));
        assert_eq!(size(Some(5000), CONTROL).unwrap(), Some(1000));
        for sizes in [SPEC, CONTROL] {
            assert_eq!(page(&all, None, Some(0), sizes).unwrap(), (vec![], None));
            assert_eq!(page(&all, None, Some(-1), sizes).unwrap_err().code.0, 13);
        }
    }

    #[test]
    fn items_page_by_their_keys() {
        let items: Vec<(String, u32)> = keys(4).into_iter().zip(0..).collect();
        let (p, t) = page_items(
            items.clone(),
            |i| i.0.clone(),
            Some("k00"),
            Some(2),
            CONTROL,
        )
        .unwrap();
        assert_eq!(p.iter().map(|i| i.1).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(t.as_deref(), Some("k02"));
    }
}
