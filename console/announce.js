// One polite live region: results of actions (an undrop, a submitted
// task) are announced there.
import { html, useEffect, useState } from "./vendor/preact-htm-standalone.module.js";

let say = () => {};

export function announce(message) {
  say(message);
}

export function Announcer() {
  const [message, setMessage] = useState("");
  useEffect(() => {
    say = (m) => {
      // Cleared first, so the same words said twice are said again.
      setMessage("");
      setTimeout(() => setMessage(m), 50);
    };
    return () => {
      say = () => {};
    };
  }, []);
  return html`<div id="announcer" role="status" aria-live="polite">${message}</div>`;
}
