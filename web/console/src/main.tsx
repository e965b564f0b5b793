import { render } from 'preact';
import { App } from './App';
import './console.css';

// The page's "Loading…" line goes: render diffs against what the container
// holds and would keep markup it did not make.
const root = document.getElementById('console')!;
root.textContent = '';
render(<App />, root);
