//! Durations as operators write them in flags and project settings.

/// A duration as an operator writes it: `0`, `90` (seconds), `30s`,
/// `15m`, `24h`, `7d`.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("duration {text:?} is not a number with a unit (s, m, h, d)"))?;
    let scale = match unit.trim() {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("duration {text:?}: the unit must be s, m, h or d")),
    };
    n.checked_mul(scale)
        .ok_or_else(|| format!("duration {text:?} is too long"))
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(parse_duration("90"), Ok(90));
        assert_eq!(parse_duration("15m"), Ok(900));
        assert_eq!(parse_duration("24h"), Ok(86_400));
        assert_eq!(parse_duration("7d"), Ok(604_800));
        assert!(parse_duration("7w").is_err());
        assert!(parse_duration("h").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
