import { track } from './track';

export function Button({ label }) {
  const onClick = () => track(label);
  return <button onClick={onClick}>{label}</button>;
}
