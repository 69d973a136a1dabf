//! A test's reduction curve as a small inline SVG: bytes (down) over check runs (across), a
//! step line from the original's size to the result's. A long curve is thinned to at most
//! [`MAX_POINTS`] steps, so 2,000 tests keep the page small. Pure: numbers in, markup out.

use std::fmt::Write as _;

use super::view::Curve;

/// The SVG's size in pixels.
const WIDTH: f64 = 180.0;
const HEIGHT: f64 = 36.0;
/// The most steps drawn of one curve.
const MAX_POINTS: usize = 120;

/// The SVG of `curve` (`data-steps` says how many steps it holds; a curve known only by its ends
/// is dashed).
pub(super) fn svg(curve: &Curve) -> String {
    let (points, class) = match curve {
        Curve::Steps(p) => (p.as_slice(), "curve steps"),
        Curve::Ends(p) => (p.as_slice(), "curve ends"),
    };
    let runs = points.iter().map(|p| p[0]).max().unwrap_or(0).max(1) as f64;
    let bytes = points.iter().map(|p| p[1]).max().unwrap_or(0).max(1) as f64;
    let x = |r: u64| r as f64 / runs * WIDTH;
    let y = |b: u64| HEIGHT - b as f64 / bytes * HEIGHT;
    let mut path = String::new();
    let mut last: Option<[u64; 2]> = None;
    for p in thin(points) {
        match last {
            None => {
                let _ = write!(path, "{:.1},{:.1}", x(p[0]), y(p[1]));
            }
            Some(l) => {
                let _ = write!(
                    path,
                    " {:.1},{:.1} {:.1},{:.1}",
                    x(p[0]),
                    y(l[1]),
                    x(p[0]),
                    y(p[1])
                );
            }
        }
        last = Some(p);
    }
    let (first, end) = (points.first(), points.last());
    let title = match (first, end) {
        (Some(f), Some(e)) => format!("{} → {} bytes in {} check runs", f[1], e[1], e[0]),
        _ => String::new(),
    };
    format!(
        "<svg class=\"{class}\" data-steps=\"{}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"-1 -1 {} {}\" role=\"img\"><title>{title}</title>\
         <polyline points=\"{path}\"/></svg>",
        points.len().saturating_sub(1),
        WIDTH + 2.0,
        HEIGHT + 2.0
    )
}

/// At most [`MAX_POINTS`] of `points`, evenly spaced, the first and the last always kept.
fn thin(points: &[[u64; 2]]) -> Vec<[u64; 2]> {
    if points.len() <= MAX_POINTS {
        return points.to_vec();
    }
    let last = points.len() - 1;
    (0..MAX_POINTS)
        .map(|i| points[i * last / (MAX_POINTS - 1)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_steps_down_from_the_start_and_a_long_one_is_thinned() {
        let drawn = svg(&Curve::Steps(vec![[0, 100], [5, 40], [10, 10]]));
        assert!(drawn.contains("data-steps=\"2\""), "{drawn}");
        assert!(drawn.contains("points=\"0.0,0.0 90.0,0.0 90.0,21.6 180.0,21.6 180.0,32.4\""));
        assert!(drawn.contains("<title>100 → 10 bytes in 10 check runs</title>"));
        assert!(svg(&Curve::Ends(vec![[0, 9], [3, 1]])).contains("class=\"curve ends\""));
        let long: Vec<[u64; 2]> = (0..10_000).map(|i| [i, 10_000 - i]).collect();
        let thinned = thin(&long);
        assert_eq!(thinned.len(), MAX_POINTS);
        assert_eq!(thinned.first(), Some(&[0, 10_000]));
        assert_eq!(thinned.last(), Some(&[9_999, 1]));
        assert!(svg(&Curve::Steps(long)).len() < 5_000);
        assert!(svg(&Curve::Steps(Vec::new())).contains("points=\"\""));
    }
}
