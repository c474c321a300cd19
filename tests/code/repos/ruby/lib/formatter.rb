def format_name(name)
  name.strip
end
