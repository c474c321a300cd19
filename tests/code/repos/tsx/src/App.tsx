import { formatName } from './format';

interface Props {
  name: string;
}

export function App({ name }: Props) {
  return <h1>{formatName(name)}</h1>;
}
