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

/// A number of seconds as [`parse_duration`] reads it, in the largest
/// unit that divides it (`604800` -> `7d`).
pub(super) fn format_duration(seconds: u64) -> String {
    match seconds {
        0 => "0".to_string(),
        s if s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::{format_duration, parse_duration};

    #[test]
    fn durations_round_trip() {
        for s in [0, 1, 59, 60, 90, 3600, 5400, 86_400, 604_800, 90_061] {
            assert_eq!(parse_duration(&format_duration(s)), Ok(s), "{s}");
        }
        assert_eq!(format_duration(604_800), "7d");
        assert_eq!(format_duration(5400), "90m");
    }

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
