import { render } from 'preact';
import { App } from './App';
import './console.css';

render(<App />, document.getElementById('console')!);
