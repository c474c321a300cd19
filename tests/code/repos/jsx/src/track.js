export function track(event) {
  console.log(event);
}
